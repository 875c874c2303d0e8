import { DataFrame, Field } from '@grafana/data';

import { fieldsOf, frameContracts, hasFields } from './contract';
import type { Normalization } from './flameData';

/**
 * One row of a `functions` answer (pkg/frames.Functions): the same engine as
 * the CLI and pprof, over the whole profile, not the drawn (pruned) tree.
 * Head fields hold the only side of a single profile.
 */
export interface FunctionRow {
  name: string;
  selfHead: number;
  totalHead: number;
  selfBase: number;
  totalBase: number;
  delta: number;
  /** The self value's change, normalised as delta is (NaN until withSelfDeltas knows the totals). */
  selfDelta: number;
  /** NaN where undefined. */
  pValue: number;
  qValue: number;
  deltaLow: number;
  deltaHigh: number;
  /** null without statistics or where no test was possible. */
  significant: boolean | null;
  /** Position in the engine's order (ranked by |delta|, significant first). */
  rank: number;
}

/** A parsed functions frame. */
export interface Functions {
  rows: FunctionRow[];
  diff: boolean;
  stats: boolean;
  unit?: string;
}

const functions = frameContracts.functions;

/** isFunctionsFrame reports whether a frame is a `functions` answer. */
export function isFunctionsFrame(frame: DataFrame): boolean {
  return hasFields(frame, functions.required);
}

/** The run totals (means) of a diff's two sides and its normalisation: what a self delta is a share of. */
export interface Totals {
  base: number;
  head: number;
  normalize: Normalization;
}

/** totalsOf reads a diff flame graph frame's root values; undefined for a single graph. */
export function totalsOf(frame: DataFrame, normalize: Normalization): Totals | undefined {
  const f = fieldsOf(frame, frameContracts.flamegraph.required, frameContracts.flamegraph.optional);
  const [base, head] = [Number(f.value.values[0]), Number(f.valueRight?.values[0])];
  return Number.isFinite(base) && Number.isFinite(head) ? { base, head, normalize } : undefined;
}

/**
 * selfDelta is a self value's change as the backend's delta is of a total
 * (docs/FRAMES.md): of the base total (absolute), or the change of the
 * share of each side's total (relative). NaN where that total is 0.
 */
export function selfDelta(selfBase: number, selfHead: number, t: Totals): number {
  if (t.base <= 0 || (t.normalize === 'relative' && t.head <= 0)) {
    return NaN;
  }
  return t.normalize === 'relative' ? selfHead / t.head - selfBase / t.base : (selfHead - selfBase) / t.base;
}

/** withSelfDeltas gives a diff's rows their self deltas, of the run totals (undefined: unknown). */
export function withSelfDeltas(f: Functions, totals: Totals | undefined): Functions {
  if (!f.diff || !totals) {
    return f;
  }
  return { ...f, rows: f.rows.map((r) => ({ ...r, selfDelta: selfDelta(r.selfBase, r.selfHead, totals) })) };
}

/** parseFunctions reads a functions frame in its row order (self deltas: see withSelfDeltas). */
export function parseFunctions(frame: DataFrame): Functions {
  const f = fieldsOf(frame, functions.required, functions.optional);
  const n = frame.length;
  const num = (f: Field | undefined, i: number) => {
    const v = f?.values[i];
    return v === null || v === undefined ? NaN : Number(v);
  };
  const diff = Boolean(f.totalHead);
  const [selfH, totH] = diff ? [f.selfHead, f.totalHead] : [f.self, f.total];
  const [selfB, totB, delta] = [f.selfBase, f.totalBase, f.delta];
  const [p, q, lo, hi, sig] = [f.pValue, f.qValue, f.deltaLow, f.deltaHigh, f.significant];
  const rows: FunctionRow[] = [];
  for (let i = 0; i < n; i++) {
    const s = sig?.values[i];
    rows.push({
      name: String(f.function.values[i]),
      selfHead: num(selfH, i),
      totalHead: num(totH, i),
      selfBase: diff ? num(selfB, i) : 0,
      totalBase: diff ? num(totB, i) : 0,
      delta: diff ? num(delta, i) : 0,
      selfDelta: NaN,
      pValue: num(p, i),
      qValue: num(q, i),
      deltaLow: num(lo, i),
      deltaHigh: num(hi, i),
      significant: s === null || s === undefined ? null : Boolean(s),
      rank: i,
    });
  }
  return { rows, diff, stats: Boolean(sig), unit: (totH ?? selfH)?.config.unit };
}

/** Sortable columns of the table; rank is the engine's own order. */
export type SortKey = 'rank' | 'name' | 'self' | 'total' | 'delta' | 'selfDelta' | 'significance';

/**
 * sortRows orders rows by a column: numbers descending (deltas by their
 * size, an undefined self delta last), significance by q-value ascending
 * (most significant first), names and rank ascending; desc=false reverses.
 * Ties keep the engine's order.
 */
export function sortRows(rows: FunctionRow[], key: SortKey, desc = true): FunctionRow[] {
  const get = (r: FunctionRow): number | string => {
    switch (key) {
      case 'rank':
        return r.rank;
      case 'name':
        return r.name;
      case 'self':
        return -r.selfHead;
      case 'total':
        return -r.totalHead;
      case 'delta':
        return -Math.abs(r.delta);
      case 'selfDelta':
        return Number.isNaN(r.selfDelta) ? Infinity : -Math.abs(r.selfDelta);
      case 'significance':
        return Number.isNaN(r.qValue) ? Infinity : r.qValue;
    }
  };
  const sign = desc ? 1 : -1;
  return [...rows].sort((a, b) => {
    const x = get(a);
    const y = get(b);
    const c = typeof x === 'string' ? x.localeCompare(y as string) : (x as number) - (y as number);
    return sign * c || a.rank - b.rank;
  });
}
