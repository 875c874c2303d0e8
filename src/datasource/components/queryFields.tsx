import React from 'react';

import { InlineField, Input } from '@grafana/ui';

import { selectors } from '../../selectors';
import { QueryField, specOf, uses } from '../queryTypes';
import { FlamediffQuery, QueryType } from '../types';

/** The width of the labels that start a row of the query editor. */
export const LABEL_WIDTH = 16;

/** What every part of the query editor gets: the query, and update, which emits a change and runs it. */
export interface EditorProps {
  query: FlamediffQuery;
  update: (patch: Partial<FlamediffQuery>) => void;
}

/** Which parts of the editor a query type uses: its row of the query-type table. */
export const usesOf = (t: QueryType) => {
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
export type Uses = ReturnType<typeof usesOf>;

/** The text options around a culprit: sandwich and the filters (regular expressions). */
export type TextField = 'sandwich' | 'keep' | 'drop' | 'hideFrames' | 'showFrom';

/** The optional numbers of the model: field width, step, the backend's default, bounds. */
const numbers = {
  threshold: { width: 12, step: 0.005, placeholder: '0.02', valid: (n: number) => n >= 0 && n <= 1 },
  minShare: { width: 12, step: 0.005, placeholder: '0.01', valid: (n: number) => n >= 0 && n < 1 },
  minChange: { width: 12, step: 0.005, placeholder: '0.02', valid: (n: number) => n >= 0 && n < 1 },
  alpha: { width: 10, step: 0.01, placeholder: '0.05', valid: (n: number) => n > 0 && n <= 0.5 },
};
type NumberField = keyof typeof numbers;

/** NumberOption is an optional number of the model (see numbers), in its own field. */
export function NumberOption(
  p: EditorProps & { field: NumberField; label: string; tooltip: string; labelWidth?: number }
) {
  const n = numbers[p.field];
  return (
    <InlineField label={p.label} labelWidth={p.labelWidth} tooltip={p.tooltip}>
      <OptionalNumber
        testId={selectors.query[p.field]}
        width={n.width}
        step={n.step}
        placeholder={n.placeholder}
        value={p.query[p.field]}
        valid={n.valid}
        onChange={(v) => p.update({ [p.field]: v })}
      />
    </InlineField>
  );
}

/** TextOption is an optional text of the model, applied on leaving the field; empty clears it. */
export function TextOption(p: EditorProps & { field: TextField; label: string; tooltip: string; labelWidth?: number }) {
  const key = p.field;
  return (
    <InlineField label={p.label} labelWidth={p.labelWidth} tooltip={p.tooltip}>
      <Input
        data-testid={selectors.query[key]}
        aria-label={p.label}
        width={key === 'sandwich' ? 40 : 24}
        defaultValue={p.query[key] ?? ''}
        onBlur={(e) => {
          const v = e.currentTarget.value || undefined;
          if (v !== p.query[key]) {
            p.update({ [key]: v });
          }
        }}
      />
    </InlineField>
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
