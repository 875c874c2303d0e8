import { FlameData } from './flameData';

/** One row of the top-functions table; head fields are 0 for a single graph. */
export interface FunctionRow {
  label: string;
  selfBase: number;
  totalBase: number;
  selfHead: number;
  totalHead: number;
  /** (totalHead - totalBase) / base root total. */
  delta: number;
}

/**
 * topFunctions sums self and total per label. A recursive function's total
 * counts each sample once: a node adds to its label's total only when no
 * ancestor has the same label.
 */
export function topFunctions(data: FlameData): FunctionRow[] {
  const m = data.labels.length;
  const selfB = new Float64Array(m);
  const totB = new Float64Array(m);
  const selfH = new Float64Array(m);
  const totH = new Float64Array(m);
  const present = new Uint8Array(m);
  // onPath[label] counts the label's occurrences on the current root path,
  // path[d] is the label at depth d of that path.
  const onPath = new Int32Array(m);
  const path = new Int32Array(data.maxLevel + 1);
  let depth = 0;
  const head = data.head;
  for (let i = 0; i < data.n; i++) {
    const l = data.level[i];
    // Leave the previous path up to this node's parent.
    for (; depth > l; depth--) {
      onPath[path[depth - 1]]--;
    }
    const lab = data.labelIdx[i];
    present[lab] = 1;
    selfB[lab] += data.base.self[i];
    if (head) {
      selfH[lab] += head.self[i];
    }
    if (onPath[lab] === 0) {
      totB[lab] += data.base.total[i];
      if (head) {
        totH[lab] += head.total[i];
      }
    }
    onPath[lab]++;
    path[depth++] = lab;
  }
  const denom = data.base.rootTotal;
  const rows: FunctionRow[] = [];
  for (let k = 0; k < m; k++) {
    if (!present[k]) {
      continue;
    }
    rows.push({
      label: data.labels[k],
      selfBase: selfB[k],
      totalBase: totB[k],
      selfHead: selfH[k],
      totalHead: totH[k],
      delta: head && denom > 0 ? (totH[k] - totB[k]) / denom : 0,
    });
  }
  return rows;
}

/** Sortable columns of the table. */
export type SortKey = 'label' | 'self' | 'total' | 'delta';

/**
 * sortRows orders rows by a column (descending for numbers, ascending for
 * labels); self and total use the head side when there is one.
 */
export function sortRows(rows: FunctionRow[], key: SortKey, diff: boolean, desc = true): FunctionRow[] {
  const get = (r: FunctionRow): number | string => {
    switch (key) {
      case 'label':
        return r.label;
      case 'self':
        return diff ? r.selfHead : r.selfBase;
      case 'total':
        return diff ? r.totalHead : r.totalBase;
      case 'delta':
        return r.delta;
    }
  };
  const sign = desc ? -1 : 1;
  return [...rows].sort((a, b) => {
    const x = get(a);
    const y = get(b);
    const c = typeof x === 'string' ? x.localeCompare(y as string) : x - (y as number);
    return key === 'label' ? -sign * c : sign * c;
  });
}
