import React from 'react';

import { SelectableValue } from '@grafana/data';
import { InlineField, InlineFieldRow, InlineSwitch, Input, RadioButtonGroup } from '@grafana/ui';

import { selectors } from '../../selectors';
import { strings } from '../../strings';
import { EditorProps, LABEL_WIDTH, NumberOption, Uses } from './queryFields';

const s = strings.query;

const normalizations: Array<SelectableValue<string>> = [
  { value: 'absolute', label: s.absolute, description: s.absoluteHelp },
  { value: 'relative', label: s.relative, description: s.relativeHelp },
];

/** TreeOptions is the row of a tree query's options: variants, the tree's size and normalisation, the test's alpha. */
export function TreeOptions({ query, update, use }: EditorProps & { use: Uses }) {
  return (
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
      {use.alpha && <NumberOption query={query} update={update} field="alpha" label={s.alpha} tooltip={s.alphaHelp} />}
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
  );
}
