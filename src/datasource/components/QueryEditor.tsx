import React, { useState } from 'react';

import { QueryEditorProps, SelectableValue } from '@grafana/data';
import { InlineField, InlineFieldRow, InlineSwitch, Input, MultiSelect, RadioButtonGroup, Select } from '@grafana/ui';

import { selectors } from '../../selectors';
import { strings } from '../../strings';
import { FlamediffDataSource } from '../datasource';
import { queryTypes } from '../queryTypes';
import { FlamediffOptions, FlamediffQuery, QueryType, Selection, defaultQuery } from '../types';
import { AroundOptions } from './AroundOptions';
import { EditorProps, LABEL_WIDTH, NumberOption, usesOf } from './queryFields';
import { SelectionEditor } from './SelectionEditor';
import { SeriesOptions } from './SeriesOptions';
import { TreeOptions } from './TreeOptions';
import { useNames, withSelected } from './useNames';

type Props = QueryEditorProps<FlamediffDataSource, FlamediffQuery, FlamediffOptions>;

const s = strings.query;
const typeOptions: Array<SelectableValue<QueryType>> = queryTypes.map((v) => ({ value: v, label: v }));

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
  const edit: EditorProps = { query, update };
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
      <SeriesOptions {...edit} use={use} datasource={datasource} builds={builds.options} />
      {(use.minShare || use.minChange || (use.alpha && !use.tree)) && (
        <InlineFieldRow>
          {use.minShare && (
            <NumberOption
              {...edit}
              field="minShare"
              label={s.minShare}
              tooltip={s.minShareHelp}
              labelWidth={LABEL_WIDTH}
            />
          )}
          {use.minChange && <NumberOption {...edit} field="minChange" label={s.minChange} tooltip={s.minChangeHelp} />}
          {use.alpha && !use.tree && (
            <NumberOption {...edit} field="alpha" label={s.alpha} tooltip={s.changeAlphaHelp} />
          )}
        </InlineFieldRow>
      )}
      {use.threshold && (
        <InlineFieldRow>
          <NumberOption
            {...edit}
            field="threshold"
            label={s.threshold}
            tooltip={s.thresholdHelp}
            labelWidth={LABEL_WIDTH}
          />
        </InlineFieldRow>
      )}
      {use.tree && <TreeOptions {...edit} use={use} />}
      {showAround && <AroundOptions {...edit} use={use} />}
    </div>
  );
}
