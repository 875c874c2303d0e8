// Frames produced by global-setup.ts and helpers to read them in tests.
import { readFileSync } from 'node:fs';

import { DataFrameJSON } from '@grafana/data';

/** The comparison used by the screenshots, the statistics and the run details tests. */
export const checkout = { app: 'checkout-service', base: '1.6.0', head: '1.7.0' };

/** Two builds of checkout-service between which its code did not change (the demo changes it at 1.3.0, 1.7.0 and 1.10.0). */
export const checkoutUnchanged = { head: { builds: ['1.6.0'], runs: [] }, base: { builds: ['1.5.0'], runs: [] } };

/** checkoutModel is the query model of the checkout comparison (a diff with variants), with changes. */
export function checkoutModel(patch: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    refId: 'A',
    queryType: 'diff',
    app: checkout.app,
    head: { builds: [checkout.head], runs: [] },
    base: { builds: [checkout.base], runs: [] },
    variants: true,
    maxNodes: 20000,
    ...patch,
  };
}

/** Every frame set the tests use, by name (see global-setup.ts). */
export interface FrameSet {
  panelDiff: DataFrameJSON[];
  panelSingle: DataFrameJSON[];
  pprofDiff: DataFrameJSON[];
  checkoutDiff: DataFrameJSON[];
  checkoutSmall: DataFrameJSON[];
  checkoutFunctions: DataFrameJSON[];
  checkoutRelative: DataFrameJSON[];
  checkoutRuns: DataFrameJSON[];
  checkoutRunsUnchanged: DataFrameJSON[];
  checkoutEvolution: DataFrameJSON[];
  iosEvolution: DataFrameJSON[];
  checkoutChangepoints: DataFrameJSON[];
}

let cached: FrameSet | undefined;

/** col reads a frame's column by field name; undefined when the field is absent. */
export function col<T = number>(frame: DataFrameJSON, name: string): T[] | undefined {
  const k = frame.schema!.fields.findIndex((f) => f.name === name);
  return k < 0 ? undefined : (frame.data!.values[k] as T[]);
}

/** labelsOf is a flame graph frame's label text per row (enum or string field). */
export function labelsOf(frame: DataFrameJSON): string[] {
  const texts: string[] | undefined = frame.schema!.fields.find((f) => f.name === 'label')!.config?.type?.enum?.text;
  return col<number | string>(frame, 'label')!.map((v) => (texts ? texts[v as number] : String(v)));
}

/** frames loads the frame sets written by the global setup. */
export function frames(): FrameSet {
  const file = process.env.FLAMEDIFF_E2E_FRAMES;
  if (!file) {
    throw new Error('FLAMEDIFF_E2E_FRAMES is not set: run the tests with npm run e2e (global-setup.ts)');
  }
  cached ??= JSON.parse(readFileSync(file, 'utf8')) as FrameSet;
  return cached;
}

/** variant picks the frame of one variant out of a variants answer. */
export function variant(set: DataFrameJSON[], name: string): DataFrameJSON {
  const f = set.find((x) => x.schema?.meta?.custom?.variant === name);
  if (!f) {
    throw new Error(`no ${name} variant among ${set.length} frames`);
  }
  return f;
}

/** A node's box in the full (unzoomed) view, in CSS pixels of the canvas. */
export interface Box {
  x: number;
  y: number;
  width: number;
}

/**
 * nodeBox is the test's own oracle of where the first node labelled label is
 * drawn in the full view of one side: siblings lie left to right inside their
 * parent in row order, widths proportional to the side's value field.
 */
export function nodeBox(
  frame: DataFrameJSON,
  label: string,
  side: 'head' | 'base',
  width: number,
  rowHeight = 20
): Box {
  const fields = frame.schema!.fields;
  const col = (name: string) => frame.data!.values[fields.findIndex((f) => f.name === name)] as number[];
  const level = col('level');
  const value = col(side === 'head' ? 'valueRight' : 'value') ?? col('value');
  const labelField = fields.find((f) => f.name === 'label')!;
  const texts: string[] | undefined = labelField.config?.type?.enum?.text;
  const labels = col('label').map((v) => (texts ? texts[v] : String(v)));
  const next: number[] = [0];
  for (let i = 0; i < level.length; i++) {
    const x = next[level[i]];
    next[level[i]] = x + value[i];
    next[level[i] + 1] = x;
    if (labels[i] === label && value[i] > 0) {
      const scale = width / value[0];
      return { x: x * scale, y: level[i] * rowHeight, width: value[i] * scale };
    }
  }
  throw new Error(`no node ${label} with a ${side} value`);
}
