import { css } from '@emotion/css';
import React, { useId } from 'react';

import { GrafanaTheme2, SelectableValue } from '@grafana/data';
import { Button, Icon, InlineField, InlineSwitch, Input, RadioButtonGroup, Select, useStyles2 } from '@grafana/ui';

import { selectors } from '../../selectors';
import { strings } from '../../strings';
import { Around, FilterKey, Only, filterKeys } from '../model/around';
import { Normalization, SideName } from '../model/flameData';
import type { Layout } from '../viewState';
import { useAfterPaint } from './useAfterPaint';

interface Props {
  layout: Layout;
  onLayout: (l: Layout) => void;
  isDiff: boolean;
  side: SideName;
  onSide: (s: SideName) => void;
  inverted: boolean;
  canInvert: boolean;
  onInverted: (v: boolean) => void;
  collapsed: boolean;
  canCollapse: boolean;
  onCollapsed: (v: boolean) => void;
  search: string;
  onSearch: (text: string) => void;
  matches?: number;
  onReset: () => void;
  /** Shown when the frame has statistics. */
  hasStats: boolean;
  significantOnly: boolean;
  onSignificantOnly: (v: boolean) => void;
  normalize: Normalization;
  /** Undefined when the other normalisation is neither at hand nor queryable. */
  onNormalize?: (v: Normalization) => void;
  /** Loads the zoomed node in full detail; undefined when nothing is zoomed or the panel cannot query. */
  onFullDetail?: () => void;
  /** The chosen function (a top-table row), whose callers and callees onSandwich opens. */
  sandwichOf?: string;
  onSandwich?: (fn: string) => void;
  /** Shows or hides the filter row (undefined: the panel has none). */
  onFilters?: () => void;
  filtersOpen?: boolean;
}

const s = strings.panel;
const normOptions: Array<SelectableValue<Normalization>> = [
  { value: 'absolute', label: s.absolute },
  { value: 'relative', label: s.relative },
];
const sideOptions: Array<SelectableValue<SideName>> = [
  { value: 'head', label: s.head },
  { value: 'base', label: s.base },
];

const layoutOptions: Array<SelectableValue<Layout>> = (['graph', 'tree', 'both', 'split'] as const).map((value) => ({
  value,
  label: s.layouts[value],
}));
/** A single graph has no base to put beside its head. */
const singleLayouts = layoutOptions.filter((o) => o.value !== 'split');

/** Toolbar holds the layout, the head/base drop-down, the variant toggles, search and reset. */
export function Toolbar(p: Props) {
  const styles = useStyles2(getStyles);
  const painted = useAfterPaint();
  return (
    <div className={styles.bar}>
      <div data-testid={selectors.panel.layout} aria-label={s.layout} role="group">
        <RadioButtonGroup
          size="sm"
          options={p.isDiff ? layoutOptions : singleLayouts}
          value={p.layout}
          onChange={p.onLayout}
        />
      </div>
      {p.isDiff &&
        p.layout !== 'split' &&
        // The split draws both sides: there is no side to choose.
        (painted ? (
          <div className={styles.side} data-testid={selectors.panel.side}>
            <Select
              aria-label={s.side}
              options={sideOptions}
              value={p.side}
              onChange={(v) => v.value && p.onSide(v.value)}
              width={12}
            />
          </div>
        ) : (
          // react-select is the toolbar's costliest input to mount (about a
          // quarter of its first render): until the graph has painted, the
          // side shows in a plain input of the Select's size.
          <div className={styles.side}>
            <Input
              readOnly
              aria-label={s.side}
              value={sideOptions.find((o) => o.value === p.side)?.label}
              suffix={<Icon name="angle-down" />}
              width={12}
            />
          </div>
        ))}
      {p.isDiff && p.onNormalize && (
        <div data-testid={selectors.panel.normalize} aria-label={s.normalize} role="group">
          <RadioButtonGroup size="sm" options={normOptions} value={p.normalize} onChange={p.onNormalize} />
        </div>
      )}
      {p.hasStats && (
        <Switch
          testId={selectors.panel.significantOnly}
          label={s.significantOnly}
          title={s.significantOnlyHelp}
          value={p.significantOnly}
          onChange={p.onSignificantOnly}
        />
      )}
      <Switch
        testId={selectors.panel.inverted}
        label={s.inverted}
        value={p.inverted}
        disabled={!p.canInvert}
        title={p.canInvert ? undefined : s.variantMissing}
        onChange={p.onInverted}
      />
      <Switch
        testId={selectors.panel.collapse}
        label={s.collapseSystem}
        value={p.collapsed}
        disabled={!p.canCollapse}
        title={p.canCollapse ? undefined : s.variantMissing}
        onChange={p.onCollapsed}
      />
      <div className={styles.search}>
        <Input
          data-testid={selectors.panel.search}
          placeholder={s.search}
          value={p.search}
          onChange={(e) => p.onSearch(e.currentTarget.value)}
          width={28}
        />
        {p.matches !== undefined && (
          <span className={styles.matches} data-testid={selectors.panel.matches}>
            {s.matches(p.matches)}
          </span>
        )}
      </div>
      {p.onFullDetail && (
        <Button
          size="sm"
          variant="secondary"
          icon="search-plus"
          title={s.fullDetailHelp}
          onClick={p.onFullDetail}
          data-testid={selectors.panel.fullDetail}
        >
          {s.fullDetail}
        </Button>
      )}
      {p.onFilters && (
        <Button
          size="sm"
          variant={p.filtersOpen ? 'primary' : 'secondary'}
          fill="outline"
          icon="filter"
          title={s.around.filtersHelp}
          aria-expanded={Boolean(p.filtersOpen)}
          onClick={p.onFilters}
          data-testid={selectors.panel.filters}
        >
          {s.around.label}
        </Button>
      )}
      {p.sandwichOf && p.onSandwich && (
        <Button
          size="sm"
          variant="secondary"
          icon="exchange-alt"
          title={s.around.sandwich(p.sandwichOf)}
          aria-label={s.around.sandwich(p.sandwichOf)}
          onClick={() => p.onSandwich!(p.sandwichOf!)}
          data-testid={selectors.panel.sandwichButton}
        >
          {s.around.sandwichShort}
        </Button>
      )}
      <Button size="sm" variant="secondary" icon="history" onClick={p.onReset} data-testid={selectors.panel.reset}>
        {s.reset}
      </Button>
    </div>
  );
}

interface AroundProps {
  /** The ask shown in the inputs. */
  ask: Around;
  onAsk: (a: Around) => void;
  /** only needs a comparison. */
  isDiff: boolean;
  /** False when the panel cannot query (the offline report): the inputs are disabled. */
  canQuery: boolean;
  loading: boolean;
  /** The backend's message for the ask it refused; the graph drawn is the last good one. */
  error?: string;
}

/**
 * AroundBar holds the four filters (applied with Enter or on leaving the
 * field) and the "only new" / "only removed" toggles, with the backend's
 * message when it refused them.
 */
export function AroundBar(p: AroundProps) {
  const styles = useStyles2(getStyles);
  const a = s.around;
  const setOnly = (only: Only, on: boolean) => p.onAsk({ ...p.ask, only: on ? only : undefined });
  return (
    <div className={styles.bar} role="group" aria-label={a.label} data-testid={selectors.panel.around}>
      {filterKeys.map((k) => (
        <FilterInput
          key={`${k}=${p.ask[k] ?? ''}`}
          field={k}
          value={p.ask[k] ?? ''}
          disabled={!p.canQuery}
          onChange={(v) => p.onAsk({ ...p.ask, [k]: v })}
        />
      ))}
      {p.isDiff &&
        onlyToggles.map((o) => (
          <Switch
            key={o.only}
            testId={o.testId}
            label={o.label}
            title={o.help}
            value={p.ask.only === o.only}
            disabled={!p.canQuery}
            onChange={(v) => setOnly(o.only, v)}
          />
        ))}
      {p.loading && <span className={styles.matches}>{s.loading}</span>}
      {p.error && (
        <span className={styles.error} role="alert" data-testid={selectors.panel.aroundError}>
          {a.rejected} {p.error}
        </span>
      )}
    </div>
  );
}

const onlyToggles: Array<{ only: Only; testId: string; label: string; help: string }> = [
  { only: 'new', testId: selectors.panel.onlyNew, label: s.around.onlyNew, help: s.around.onlyNewHelp },
  { only: 'removed', testId: selectors.panel.onlyRemoved, label: s.around.onlyRemoved, help: s.around.onlyRemovedHelp },
];

const filterLabels: Record<FilterKey, { label: string; help: string }> = {
  keep: { label: s.around.keep, help: s.around.keepHelp },
  drop: { label: s.around.drop, help: s.around.dropHelp },
  hideFrames: { label: s.around.hideFrames, help: s.around.hideFramesHelp },
  showFrom: { label: s.around.showFrom, help: s.around.showFromHelp },
};

/** FilterInput is one filter's text field; Enter or leaving it applies a changed value. */
function FilterInput(p: { field: FilterKey; value: string; disabled: boolean; onChange: (v: string) => void }) {
  const { label, help } = filterLabels[p.field];
  const id = useId();
  const apply = (v: string) => v !== p.value && p.onChange(v);
  return (
    <InlineField label={label} htmlFor={id} tooltip={`${help}. ${s.around.filterHint}`} disabled={p.disabled}>
      <Input
        id={id}
        data-testid={selectors.panel[p.field]}
        aria-description={help}
        placeholder="regexp"
        width={16}
        defaultValue={p.value}
        onBlur={(e) => apply(e.currentTarget.value)}
        onKeyDown={(e) => e.key === 'Enter' && apply(e.currentTarget.value)}
      />
    </InlineField>
  );
}

/**
 * Switch is a labelled toggle of the toolbar; a variant toggle whose frame is
 * missing is disabled, its title saying how to enable it.
 */
function Switch(p: {
  testId: string;
  label: string;
  title?: string;
  value: boolean;
  disabled?: boolean;
  onChange: (v: boolean) => void;
}) {
  return (
    <span data-testid={p.testId} title={p.title}>
      <InlineSwitch
        label={p.label}
        showLabel
        value={p.value}
        disabled={p.disabled}
        onChange={(e) => p.onChange(e.currentTarget.checked)}
      />
    </span>
  );
}

const getStyles = (theme: GrafanaTheme2) => ({
  bar: css({
    display: 'flex',
    flexWrap: 'wrap',
    alignItems: 'center',
    gap: theme.spacing(1),
    paddingBottom: theme.spacing(0.5),
  }),
  side: css({ display: 'inline-block' }),
  search: css({ display: 'flex', alignItems: 'center', gap: theme.spacing(1), flexShrink: 0 }),
  error: css({ color: theme.colors.error.text, fontSize: theme.typography.bodySmall.fontSize }),
  matches: css({
    color: theme.colors.text.secondary,
    fontSize: theme.typography.bodySmall.fontSize,
    whiteSpace: 'nowrap',
  }),
});
