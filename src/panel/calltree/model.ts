import { FlameData } from '../model/flameData';

/** The call tree's columns; every one sorts. */
export type TreeColumn = 'name' | 'headSelf' | 'headTotal' | 'baseSelf' | 'baseTotal' | 'delta' | 'ci' | 'q';

export interface TreeSort {
  column: TreeColumn;
  desc: boolean;
}

/** The sort a call tree opens with: the largest change first in a diff, the largest total in a single graph. */
export function defaultSort(data: FlameData): TreeSort {
  return data.head ? { column: 'delta', desc: true } : { column: 'headTotal', desc: true };
}

/**
 * sortValue is a node's number in a numeric column. A single graph's only
 * side is its base (FlameData); its "head" columns show it. The delta sorts
 * by its size, so that descending puts the largest change (either way)
 * first; the interval by its bound nearest zero (the least change it
 * admits); q ascending is the most significant first, so q's descending
 * order is by 1 - q.
 */
function numberOf(data: FlameData, column: Exclude<TreeColumn, 'name'>): (i: number) => number {
  const head = data.head ?? data.base;
  const stats = data.stats;
  switch (column) {
    case 'headSelf':
      return (i) => head.self[i];
    case 'headTotal':
      return (i) => head.total[i];
    case 'baseSelf':
      return (i) => data.base.self[i];
    case 'baseTotal':
      return (i) => data.base.total[i];
    case 'delta':
      return (i) => Math.abs(data.delta[i]);
    case 'ci': {
      if (!stats) {
        return () => 0;
      }
      const lo = stats.deltaLow;
      const hi = stats.deltaHigh;
      return (i) => (lo[i] > 0 ? lo[i] : hi[i] < 0 ? -hi[i] : Number.isFinite(lo[i]) ? 0 : -1);
    }
    case 'q': {
      if (!stats) {
        return () => 0;
      }
      const q = stats.qValue;
      return (i) => (Number.isFinite(q[i]) ? 1 - q[i] : -1);
    }
  }
}

/**
 * compareOf orders siblings by a column; ties keep the frame's order (the
 * flame graph's left to right), so a sort is stable and repeatable.
 */
export function compareOf(data: FlameData, sort: TreeSort): (a: number, b: number) => number {
  const sign = sort.desc ? -1 : 1;
  if (sort.column === 'name') {
    const name = (i: number) => data.labels[data.labelIdx[i]];
    return (a, b) => {
      const x = name(a);
      const y = name(b);
      return x < y ? -sign : x > y ? sign : a - b;
    };
  }
  const v = numberOf(data, sort.column);
  return (a, b) => {
    const d = v(a) - v(b);
    return d !== 0 ? sign * d : a - b;
  };
}

/**
 * keepOf marks the nodes a search leaves in the tree: the matches and
 * their ancestors (a node stays when its subtree holds a match). One pass:
 * the matches before each node, counted, tell whether its subtree has one.
 */
export function keepOf(data: FlameData, match: Uint8Array): Uint8Array {
  const before = new Int32Array(data.n + 1);
  for (let i = 0; i < data.n; i++) {
    before[i + 1] = before[i] + match[i];
  }
  const keep = new Uint8Array(data.n);
  for (let i = 0; i < data.n; i++) {
    keep[i] = before[data.end[i]] - before[i] > 0 ? 1 : 0;
  }
  return keep;
}

/** parents lists each node's parent (-1 for a level-0 node), in one pass. */
export function parentsOf(data: FlameData): Int32Array {
  const parent = new Int32Array(data.n);
  const stack = new Int32Array(data.maxLevel + 2);
  for (let i = 0; i < data.n; i++) {
    const l = data.level[i];
    stack[l] = i;
    parent[i] = l > 0 ? stack[l - 1] : -1;
  }
  return parent;
}

/**
 * TreeModel is the call tree of one frame under one sort and search: each
 * node's sorted children, computed when the node is first expanded, so a
 * million-node frame sorts only what is shown.
 */
export class TreeModel {
  private readonly sorted = new Map<number, Int32Array>();
  private readonly compare: (a: number, b: number) => number;

  constructor(
    readonly data: FlameData,
    readonly sort: TreeSort,
    /** The nodes a search leaves (undefined: all). */
    readonly keep?: Uint8Array
  ) {
    this.compare = compareOf(data, sort);
  }

  /** children are node's children in sort order; node -1 is the top (the level-0 nodes). */
  children(node: number): Int32Array {
    let c = this.sorted.get(node);
    if (!c) {
      const { end, n } = this.data;
      const out: number[] = [];
      const stop = node < 0 ? n : end[node];
      for (let j = node + 1; j < stop; j = end[j]) {
        if (!this.keep || this.keep[j]) {
          out.push(j);
        }
      }
      c = Int32Array.from(out).sort(this.compare);
      this.sorted.set(node, c);
    }
    return c;
  }

  /** hasChildren reports whether node has children left in the tree (without sorting them). */
  hasChildren(node: number): boolean {
    const { end } = this.data;
    for (let j = node + 1; j < end[node]; j = end[j]) {
      if (!this.keep || this.keep[j]) {
        return true;
      }
    }
    return false;
  }
}

/**
 * Rows are the visible rows of a tree, top to bottom: each one's node,
 * its position among its siblings (1-based) and their count, as
 * aria-posinset and aria-setsize need them.
 */
export interface Rows {
  count: number;
  node: Int32Array;
  posInSet: Int32Array;
  setSize: Int32Array;
  /** The row of a node, -1 when it is not shown. */
  rowOf(node: number): number;
}

/**
 * flatten walks the expanded nodes depth first, children in sort order:
 * the cost is the number of rows shown (and the sorting of the children
 * of nodes expanded for the first time), not the size of the tree.
 */
export function flatten(model: TreeModel, expanded: ReadonlySet<number>): Rows {
  let node = new Int32Array(64);
  let posInSet = new Int32Array(64);
  let setSize = new Int32Array(64);
  let count = 0;
  const push = (i: number, pos: number, size: number) => {
    if (count === node.length) {
      const grow = (a: Int32Array) => {
        const b = new Int32Array(a.length * 2);
        b.set(a);
        return b;
      };
      node = grow(node);
      posInSet = grow(posInSet);
      setSize = grow(setSize);
    }
    node[count] = i;
    posInSet[count] = pos;
    setSize[count] = size;
    count++;
  };
  // An explicit stack of (children, next index): deep trees do not overflow the call stack.
  const stack: Array<{ kids: Int32Array; at: number }> = [{ kids: model.children(-1), at: 0 }];
  while (stack.length > 0) {
    const top = stack[stack.length - 1];
    if (top.at >= top.kids.length) {
      stack.pop();
      continue;
    }
    const i = top.kids[top.at++];
    push(i, top.at, top.kids.length);
    if (expanded.has(i)) {
      const kids = model.children(i);
      if (kids.length > 0) {
        stack.push({ kids, at: 0 });
      }
    }
  }
  let index: Map<number, number> | undefined;
  return {
    count,
    node,
    posInSet,
    setSize,
    rowOf(i) {
      if (!index) {
        index = new Map();
        for (let r = 0; r < count; r++) {
          index.set(node[r], r);
        }
      }
      return index.get(i) ?? -1;
    },
  };
}

/** The tree's keyboard state: the focused row's node (-1: none yet) and the expanded nodes. */
export interface TreeState {
  focused: number;
  expanded: ReadonlySet<number>;
}

/** withAncestors expands node's ancestors, so that its row is shown. */
export function withAncestors(expanded: ReadonlySet<number>, parent: Int32Array, node: number): ReadonlySet<number> {
  let out: Set<number> | undefined;
  for (let p = node >= 0 ? parent[node] : -1; p >= 0; p = parent[p]) {
    if (!expanded.has(p)) {
      out ??= new Set(expanded);
      out.add(p);
    }
  }
  return out ?? expanded;
}

/** How many rows Page Up and Page Down move. */
export const PAGE = 10;

/**
 * treeKey is the WAI-ARIA treegrid's keyboard (its rows focused): Up and
 * Down move a row, Home and End to the first and last, Page Up and Down by
 * PAGE rows; Right expands a closed node or moves to its first child, Left
 * collapses an open node or moves to its parent; Space toggles; `*`
 * expands the focused node's siblings. It returns the state unchanged
 * (the same object) for a key it does not handle.
 */
export function treeKey(s: TreeState, key: string, rows: Rows, model: TreeModel, parent: Int32Array): TreeState {
  if (rows.count === 0) {
    return s;
  }
  const at = s.focused >= 0 ? rows.rowOf(s.focused) : -1;
  const to = (r: number): TreeState => {
    const focused = rows.node[Math.max(0, Math.min(rows.count - 1, r))];
    return focused === s.focused ? s : { ...s, focused };
  };
  if (at < 0) {
    // Nothing focused (or its row went away): every key starts at the first row.
    return ['ArrowUp', 'ArrowDown', 'ArrowLeft', 'ArrowRight', 'Home', 'End', 'PageUp', 'PageDown'].includes(key)
      ? to(key === 'End' ? rows.count - 1 : 0)
      : s;
  }
  const i = s.focused;
  const open = s.expanded.has(i);
  const toggled = (on: boolean) => {
    const expanded = new Set(s.expanded);
    if (on) {
      expanded.add(i);
    } else {
      expanded.delete(i);
    }
    return { ...s, expanded };
  };
  switch (key) {
    case 'ArrowDown':
      return to(at + 1);
    case 'ArrowUp':
      return to(at - 1);
    case 'Home':
      return to(0);
    case 'End':
      return to(rows.count - 1);
    case 'PageDown':
      return to(at + PAGE);
    case 'PageUp':
      return to(at - PAGE);
    case 'ArrowRight':
      if (!model.hasChildren(i)) {
        return s;
      }
      return open ? to(at + 1) : toggled(true);
    case 'ArrowLeft':
      if (open && model.hasChildren(i)) {
        return toggled(false);
      }
      return parent[i] >= 0 ? { ...s, focused: parent[i] } : s;
    case ' ':
      return model.hasChildren(i) ? toggled(!open) : s;
    case '*': {
      const expanded = new Set(s.expanded);
      for (const j of model.children(parent[i])) {
        if (model.hasChildren(j)) {
          expanded.add(j);
        }
      }
      return { ...s, expanded };
    }
    default:
      return s;
  }
}
