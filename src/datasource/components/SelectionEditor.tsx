import React from 'react';

import { InlineField, InlineFieldRow, MultiSelect } from '@grafana/ui';

import { strings } from '../../strings';
import { FlamediffDataSource } from '../datasource';
import { Selection } from '../types';
import { useNames, withSelected } from './useNames';

interface Props {
  datasource: FlamediffDataSource;
  app: string;
  value: Selection;
  onChange: (s: Selection) => void;
  labels: { builds: string; runs: string };
  testIds: { builds: string; runs: string };
}

const LABEL_WIDTH = 16;

/** SelectionEditor picks builds and, optionally, some of their runs. */
export function SelectionEditor({ datasource, app, value, onChange, labels, testIds }: Props) {
  const builds = useNames(app, () => datasource.builds(app));
  const runsKey = app && value.builds.length > 0 ? JSON.stringify([app, value.builds]) : '';
  const runs = useNames(runsKey, async () => {
    const lists = await Promise.all(value.builds.map((b) => datasource.runs(app, b)));
    return [...new Set(lists.flat())];
  });
  return (
    <InlineFieldRow>
      <InlineField label={labels.builds} labelWidth={LABEL_WIDTH} error={builds.error} invalid={Boolean(builds.error)}>
        <div data-testid={testIds.builds}>
          <MultiSelect
            aria-label={labels.builds}
            width={40}
            isLoading={builds.loading}
            allowCustomValue
            options={withSelected(builds.options, value.builds)}
            value={value.builds}
            onChange={(v) => onChange({ builds: v.map((o) => o.value!), runs: [] })}
          />
        </div>
      </InlineField>
      <InlineField label={labels.runs} labelWidth={LABEL_WIDTH} error={runs.error} invalid={Boolean(runs.error)}>
        <div data-testid={testIds.runs}>
          <MultiSelect
            aria-label={labels.runs}
            width={40}
            isLoading={runs.loading}
            allowCustomValue
            placeholder={strings.query.allRuns}
            options={withSelected(runs.options, value.runs)}
            value={value.runs}
            onChange={(v) => onChange({ ...value, runs: v.map((o) => o.value!) })}
          />
        </div>
      </InlineField>
    </InlineFieldRow>
  );
}
