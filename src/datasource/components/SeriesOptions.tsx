import React from 'react';

import { SelectableValue } from '@grafana/data';
import { AsyncSelect, InlineField, InlineFieldRow, Select } from '@grafana/ui';

import { selectors } from '../../selectors';
import { strings } from '../../strings';
import { FlamediffDataSource } from '../datasource';
import { EditorProps, LABEL_WIDTH, Uses } from './queryFields';
import { withSelected } from './useNames';

const s = strings.query;

/** The numeric fields of a timeseries answer (docs/FRAMES.md). */
const seriesFields: Array<SelectableValue<string>> = [
  'value',
  'change',
  'pValue',
  'significant',
  'regression',
  'changepoint',
].map((v) => ({ value: v, label: v }));

/** PREVIOUS is the baseline value that compares each build with the one before it. */
const PREVIOUS = 'previous';

interface Props extends EditorProps {
  use: Uses;
  datasource: FlamediffDataSource;
  /** The app's builds, which the baseline may name. */
  builds: Array<SelectableValue<string>>;
}

/** SeriesOptions are the rows of a timeseries query: its function, baseline and field. */
export function SeriesOptions({ query, update, use, datasource, builds }: Props) {
  return (
    <>
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
                  ...withSelected(builds, query.baseline && query.baseline !== PREVIOUS ? [query.baseline] : []),
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
    </>
  );
}
