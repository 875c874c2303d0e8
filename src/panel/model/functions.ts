import { DataFrame, Field } from '@grafana/data';

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

/** isFunctionsFrame reports whether a frame is a `functions` answer. */
export function isFunctionsFrame(frame: DataFrame): boolean {
  return frame.fields.some((f) => f.name === 'function');
}

/** parseFunctions reads a functions frame in its row order. */
export function parseFunctions(frame: DataFrame): Functions {
  const get = (name: string): Field | undefined => frame.fields.find((f) => f.name === name);
  const n = frame.length;
  const num = (f: Field | undefined, i: number) => {
    const v = f?.values[i];
    return v === null || v === undefined ? NaN : Number(v);
  };
  const diff = Boolean(get('totalHead'));
  const [selfH, totH] = diff ? [get('selfHead'), get('totalHead')] : [get('self'), get('total')];
  const [selfB, totB, delta] = [get('selfBase'), get('totalBase'), get('delta')];
  const [p, q, lo, hi, sig] = ['pValue', 'qValue', 'deltaLow', 'deltaHigh', 'significant'].map(get);
  const rows: FunctionRow[] = [];
  for (let i = 0; i < n; i++) {
    const s = sig?.values[i];
    rows.push({
      name: String(get('function')!.values[i]),
      selfHead: num(selfH, i),
      totalHead: num(totH, i),
      selfBase: diff ? num(selfB, i) : 0,
      totalBase: diff ? num(totB, i) : 0,
      delta: diff ? num(delta, i) : 0,
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
export type SortKey = 'rank' | 'name' | 'self' | 'total' | 'delta' | 'significance';

/**
 * sortRows orders rows by a column: numbers descending (delta by |delta|),
 * significance by q-value ascending (most significant first), names and rank
 * ascending; desc=false reverses. Ties keep the engine's order.
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
