import React, { useState } from 'react';

import { QueryEditorProps, SelectableValue } from '@grafana/data';
import {
  AsyncSelect,
  InlineField,
  InlineFieldRow,
  InlineSwitch,
  Input,
  MultiSelect,
  RadioButtonGroup,
  Select,
} from '@grafana/ui';

import { selectors } from '../../selectors';
import { strings } from '../../strings';
import { FlamediffDataSource } from '../datasource';
import { QueryField, queryTypes, specOf, uses } from '../queryTypes';
import { FlamediffOptions, FlamediffQuery, QueryType, Selection, defaultQuery } from '../types';
import { SelectionEditor } from './SelectionEditor';
import { useNames, withSelected } from './useNames';

type Props = QueryEditorProps<FlamediffDataSource, FlamediffQuery, FlamediffOptions>;

const s = strings.query;
const LABEL_WIDTH = 16;
const typeOptions: Array<SelectableValue<QueryType>> = queryTypes.map((v) => ({ value: v, label: v }));

/** Which parts of the editor a query type uses: its row of the query-type table. */
const usesOf = (t: QueryType) => {
  const spec = specOf(t);
  const reads = (f: QueryField) => uses(t, f);
  return {
    head: spec !== undefined && spec.head !== 'unused',
    base: spec !== undefined && spec.base !== 'unused',
    builds: spec !== undefined && spec.builds !== 'unused',
    tree: spec?.tree ?? false,
    variants: reads('variants'),
    fn: reads('function'),
    baseline: reads('baseline'),
    field: reads('field'),
    threshold: reads('threshold'),
    normalize: reads('normalize'),
    alpha: reads('alpha'),
    minShare: reads('minShare'),
    minChange: reads('minChange'),
    sandwich: reads('sandwich'),
    filters: reads('keep'),
    only: reads('only'),
  };
};

/** The text options around a culprit: sandwich and the filters (regular expressions). */
type TextField = 'sandwich' | 'keep' | 'drop' | 'hideFrames' | 'showFrom';

const onlyOptions: Array<SelectableValue<string>> = [
  { value: '', label: s.onlyAll },
  { value: 'new', label: s.onlyNew },
  { value: 'removed', label: s.onlyRemoved },
];

/** The numeric fields of a timeseries answer (docs/FRAMES.md). */
const seriesFields: Array<SelectableValue<string>> = [
  'value',
  'change',
  'pValue',
  'significant',
  'regression',
  'changepoint',
].map((v) => ({ value: v, label: v }));

const normalizations: Array<SelectableValue<string>> = [
  { value: 'absolute', label: s.absolute, description: s.absoluteHelp },
  { value: 'relative', label: s.relative, description: s.relativeHelp },
];

/** The optional numbers of the model: field width, step, the backend's default, bounds. */
const numbers = {
  threshold: { width: 12, step: 0.005, placeholder: '0.02', valid: (n: number) => n >= 0 && n <= 1 },
  minShare: { width: 12, step: 0.005, placeholder: '0.01', valid: (n: number) => n >= 0 && n < 1 },
  minChange: { width: 12, step: 0.005, placeholder: '0.02', valid: (n: number) => n >= 0 && n < 1 },
  alpha: { width: 10, step: 0.01, placeholder: '0.05', valid: (n: number) => n > 0 && n <= 0.5 },
};
type NumberField = keyof typeof numbers;

/** PREVIOUS is the baseline value that compares each build with the one before it. */
const PREVIOUS = 'previous';

/**
 * QueryEditor edits the query model of docs/QUERIES.md: type, app, head/base builds
 * and runs (pickers fed by the data source resources), builds, function and
 * tree options. Every change is emitted at once and runs the query.
 */
export function QueryEditor({ query: raw, datasource, onChange, onRunQuery }: Props) {
  const query: FlamediffQuery = { ...defaultQuery, ...raw } as FlamediffQuery;
  const use = usesOf(query.queryType);
  const apps = useNames('apps', () => datasource.apps());
  const builds = useNames(use.builds ? query.app : '', () => datasource.builds(query.app));
  // The options around a culprit take two rows: shown on demand, or when one is set.
  const [aroundOpen, setAroundOpen] = useState(false);
  const aroundSet = (['sandwich', 'keep', 'drop', 'hideFrames', 'showFrom', 'only'] as const).some((k) => query[k]);
  const showAround = (use.filters || use.sandwich) && (aroundOpen || aroundSet);

  const update = (patch: Partial<FlamediffQuery>) => {
    onChange({ ...query, ...patch });
    onRunQuery();
  };
  // An optional number of the model (see numbers), in its own field.
  const number = (key: NumberField, label: string, tooltip: string, labelWidth?: number) => {
    const n = numbers[key];
    return (
      <InlineField label={label} labelWidth={labelWidth} tooltip={tooltip}>
        <OptionalNumber
          testId={selectors.query[key]}
          width={n.width}
          step={n.step}
          placeholder={n.placeholder}
          value={query[key]}
          valid={n.valid}
          onChange={(v) => update({ [key]: v })}
        />
      </InlineField>
    );
  };
  // An optional text of the model, applied on leaving the field; empty clears it.
  const text = (key: TextField, label: string, tooltip: string, labelWidth?: number) => (
    <InlineField label={label} labelWidth={labelWidth} tooltip={tooltip}>
      <Input
        data-testid={selectors.query[key]}
        aria-label={label}
        width={key === 'sandwich' ? 40 : 24}
        defaultValue={query[key] ?? ''}
        onBlur={(e) => {
          const v = e.currentTarget.value || undefined;
          if (v !== query[key]) {
            update({ [key]: v });
          }
        }}
      />
    </InlineField>
  );
  const selection = (
    side: 'head' | 'base',
    label: { builds: string; runs: string },
    ids: { builds: string; runs: string }
  ) => (
    <SelectionEditor
      datasource={datasource}
      app={query.app}
      value={query[side]}
      onChange={(v: Selection) => update({ [side]: v })}
      labels={label}
      testIds={ids}
    />
  );

  return (
    <div data-testid={selectors.query.root}>
      <InlineFieldRow>
        <InlineField label={s.queryType} labelWidth={LABEL_WIDTH}>
          <div data-testid={selectors.query.queryType}>
            <RadioButtonGroup
              options={typeOptions}
              value={query.queryType}
              onChange={(v) => update({ queryType: v })}
            />
          </div>
        </InlineField>
      </InlineFieldRow>
      <InlineFieldRow>
        <InlineField label={s.app} labelWidth={LABEL_WIDTH} error={apps.error} invalid={Boolean(apps.error)}>
          <div data-testid={selectors.query.app}>
            <Select
              aria-label={s.app}
              width={40}
              isLoading={apps.loading}
              allowCustomValue
              options={withSelected(apps.options, query.app ? [query.app] : [])}
              value={query.app || null}
              onChange={(v) =>
                update({
                  app: v.value ?? '',
                  head: { builds: [], runs: [] },
                  base: { builds: [], runs: [] },
                  builds: [],
                })
              }
            />
          </div>
        </InlineField>
      </InlineFieldRow>
      <InlineFieldRow>
        <InlineField label={s.profileType} labelWidth={LABEL_WIDTH} tooltip={s.profileTypeHelp}>
          <Input
            data-testid={selectors.query.profileType}
            width={40}
            defaultValue={query.profileType ?? ''}
            onBlur={(e) => {
              const v = e.currentTarget.value.trim() || undefined;
              if (v !== query.profileType) {
                update({ profileType: v });
              }
            }}
          />
        </InlineField>
        {(use.filters || use.sandwich) && (
          <span data-testid={selectors.query.around} title={s.aroundHelp}>
            <InlineSwitch
              label={s.around}
              showLabel
              value={showAround}
              disabled={aroundSet}
              onChange={(e) => setAroundOpen(e.currentTarget.checked)}
            />
          </span>
        )}
      </InlineFieldRow>
      {use.head &&
        selection(
          'head',
          { builds: s.headBuilds, runs: s.headRuns },
          { builds: selectors.query.headBuilds, runs: selectors.query.headRuns }
        )}
      {use.base &&
        selection(
          'base',
          { builds: s.baseBuilds, runs: s.baseRuns },
          { builds: selectors.query.baseBuilds, runs: selectors.query.baseRuns }
        )}
      {use.builds && (
        <InlineFieldRow>
          <InlineField label={s.builds} labelWidth={LABEL_WIDTH} error={builds.error} invalid={Boolean(builds.error)}>
            <div data-testid={selectors.query.builds}>
              <MultiSelect
                aria-label={s.builds}
                width={60}
                allowCustomValue
                isLoading={builds.loading}
                options={withSelected(builds.options, query.builds)}
                value={query.builds}
                onChange={(v) => update({ builds: v.map((o) => o.value!) })}
              />
            </div>
          </InlineField>
        </InlineFieldRow>
      )}
      {use.fn && (
        <InlineFieldRow>
          <InlineField label={s.function} labelWidth={LABEL_WIDTH}>
            <div data-testid={selectors.query.fn}>
              <AsyncSelect
                aria-label={s.function}
                width={60}
                isClearable
                allowCustomValue
                defaultOptions
                key={query.app}
                loadOptions={async (q: string) =>
                  query.app ? (await datasource.functions(query.app, q)).map((v) => ({ value: v, label: v })) : []
                }
                value={query.function ? { value: query.function, label: query.function } : null}
                onChange={(v: SelectableValue<string> | null) => update({ function: v?.value })}
              />
            </div>
          </InlineField>
        </InlineFieldRow>
      )}
      {use.baseline && (
        <InlineFieldRow>
          <InlineField label={s.baseline} labelWidth={LABEL_WIDTH} tooltip={s.baselineHelp}>
            <div data-testid={selectors.query.baseline}>
              <Select
                aria-label={s.baseline}
                width={40}
                isClearable
                allowCustomValue
                options={[
                  { value: PREVIOUS, label: s.previous },
                  ...withSelected(
                    builds.options,
                    query.baseline && query.baseline !== PREVIOUS ? [query.baseline] : []
                  ),
                ]}
                value={query.baseline || null}
                onChange={(v: SelectableValue<string> | null) => update({ baseline: v?.value })}
              />
            </div>
          </InlineField>
        </InlineFieldRow>
      )}
      {use.field && (
        <InlineFieldRow>
          <InlineField label={s.field} labelWidth={LABEL_WIDTH} tooltip={s.fieldHelp}>
            <div data-testid={selectors.query.field}>
              <Select
                aria-label={s.field}
                width={40}
                isClearable
                options={seriesFields}
                value={query.field || null}
                onChange={(v: SelectableValue<string> | null) => update({ field: v?.value })}
              />
            </div>
          </InlineField>
        </InlineFieldRow>
      )}
      {(use.minShare || use.minChange || (use.alpha && !use.tree)) && (
        <InlineFieldRow>
          {use.minShare && number('minShare', s.minShare, s.minShareHelp, LABEL_WIDTH)}
          {use.minChange && number('minChange', s.minChange, s.minChangeHelp)}
          {use.alpha && !use.tree && number('alpha', s.alpha, s.changeAlphaHelp)}
        </InlineFieldRow>
      )}
      {use.threshold && (
        <InlineFieldRow>{number('threshold', s.threshold, s.thresholdHelp, LABEL_WIDTH)}</InlineFieldRow>
      )}
      {use.tree && (
        <InlineFieldRow>
          <span data-testid={selectors.query.inverted}>
            <InlineSwitch
              label={s.inverted}
              showLabel
              value={query.inverted}
              onChange={(e) => update({ inverted: e.currentTarget.checked })}
            />
          </span>
          <span data-testid={selectors.query.collapse}>
            <InlineSwitch
              label={s.collapseSystem}
              showLabel
              value={query.collapseSystem}
              onChange={(e) => update({ collapseSystem: e.currentTarget.checked })}
            />
          </span>
          <InlineField label={s.maxNodes} labelWidth={LABEL_WIDTH}>
            <Input
              data-testid={selectors.query.maxNodes}
              type="number"
              width={12}
              min={1}
              defaultValue={query.maxNodes}
              onBlur={(e) => {
                const n = Number(e.currentTarget.value);
                if (Number.isInteger(n) && n > 0 && n !== query.maxNodes) {
                  update({ maxNodes: n });
                }
              }}
            />
          </InlineField>
          {use.normalize && (
            <InlineField label={s.normalize} tooltip={s.normalizeHelp}>
              <div data-testid={selectors.query.normalize}>
                <RadioButtonGroup
                  options={normalizations}
                  value={query.normalize ?? 'absolute'}
                  onChange={(v) => update({ normalize: v })}
                />
              </div>
            </InlineField>
          )}
          {use.alpha && number('alpha', s.alpha, s.alphaHelp)}
          {use.variants && (
            <span data-testid={selectors.query.variants} title={s.variantsHelp}>
              <InlineSwitch
                label={s.variants}
                showLabel
                value={query.variants}
                onChange={(e) => update({ variants: e.currentTarget.checked })}
              />
            </span>
          )}
        </InlineFieldRow>
      )}
      {showAround && use.filters && (
        <InlineFieldRow>
          {text('keep', s.keep, s.filterHelp, LABEL_WIDTH)}
          {text('drop', s.drop, s.filterHelp)}
          {text('hideFrames', s.hideFrames, s.filterHelp)}
          {text('showFrom', s.showFrom, s.filterHelp)}
        </InlineFieldRow>
      )}
      {showAround && (use.sandwich || use.only) && (
        <InlineFieldRow>
          {use.sandwich && text('sandwich', s.sandwich, s.sandwichHelp, LABEL_WIDTH)}
          {use.only && (
            <InlineField label={s.only} labelWidth={use.sandwich ? undefined : LABEL_WIDTH} tooltip={s.onlyHelp}>
              <div data-testid={selectors.query.only}>
                <RadioButtonGroup
                  options={onlyOptions}
                  value={query.only ?? ''}
                  onChange={(v) => update({ only: v || undefined })}
                />
              </div>
            </InlineField>
          )}
        </InlineFieldRow>
      )}
    </div>
  );
}

/**
 * OptionalNumber edits a number the backend defaults when it is absent: on
 * blur an empty field clears it (undefined) and a valid new number sets it.
 */
function OptionalNumber(p: {
  testId: string;
  width: number;
  step: number;
  placeholder: string;
  value?: number;
  valid: (n: number) => boolean;
  onChange: (v: number | undefined) => void;
}) {
  return (
    <Input
      data-testid={p.testId}
      type="number"
      width={p.width}
      step={p.step}
      placeholder={p.placeholder}
      defaultValue={p.value}
      onBlur={(e) => {
        const text = e.currentTarget.value;
        const n = Number(text);
        if (text === '') {
          p.onChange(undefined);
        } else if (p.valid(n) && n !== p.value) {
          p.onChange(n);
        }
      }}
    />
  );
}
