import React from 'react';

import { SelectableValue } from '@grafana/data';
import { InlineField, InlineFieldRow, RadioButtonGroup } from '@grafana/ui';

import { selectors } from '../../selectors';
import { strings } from '../../strings';
import { EditorProps, LABEL_WIDTH, TextOption, Uses } from './queryFields';

const s = strings.query;

const onlyOptions: Array<SelectableValue<string>> = [
  { value: '', label: s.onlyAll },
  { value: 'new', label: s.onlyNew },
  { value: 'removed', label: s.onlyRemoved },
];

/** AroundOptions are the rows of the options around a culprit: the filters, sandwich and only new/removed. */
export function AroundOptions({ query, update, use }: EditorProps & { use: Uses }) {
  const text = { query, update, tooltip: s.filterHelp };
  return (
    <>
      {use.filters && (
        <InlineFieldRow>
          <TextOption {...text} field="keep" label={s.keep} labelWidth={LABEL_WIDTH} />
          <TextOption {...text} field="drop" label={s.drop} />
          <TextOption {...text} field="hideFrames" label={s.hideFrames} />
          <TextOption {...text} field="showFrom" label={s.showFrom} />
        </InlineFieldRow>
      )}
      {(use.sandwich || use.only) && (
        <InlineFieldRow>
          {use.sandwich && (
            <TextOption
              {...text}
              field="sandwich"
              label={s.sandwich}
              tooltip={s.sandwichHelp}
              labelWidth={LABEL_WIDTH}
            />
          )}
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
    </>
  );
}
