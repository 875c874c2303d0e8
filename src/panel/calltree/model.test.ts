import { FieldType } from '@grafana/data';

import { diffRows, flameFrame } from '../../testing/frames';
import { toFlameData } from '../model/flameData';
import { search } from '../model/search';
import {
  TreeColumn,
  TreeModel,
  TreeState,
  defaultSort,
  flatten,
  keepOf,
  parentsOf,
  treeKey,
  withAncestors,
} from './model';

// diffRows: total(0) > main(1) > a(2) b(3) c(4) d(5); total > gc(6).
// Deltas of the base total (100): total +0.2, main +0.1, a 0, b 0, c +0.2, d -0.1, gc +0.1.
const data = toFlameData(
  flameFrame(diffRows, {
    extra: [
      { name: 'significant', type: FieldType.boolean, values: [null, true, false, false, true, true, true] },
      { name: 'qValue', type: FieldType.number, values: [null, 0.01, 0.5, 0.6, 0.002, 0.03, 0.04] },
      { name: 'deltaLow', type: FieldType.number, values: [null, 0.05, -0.01, -0.02, 0.15, -0.12, 0.02] },
      { name: 'deltaHigh', type: FieldType.number, values: [null, 0.15, 0.01, 0.02, 0.25, -0.08, 0.2] },
    ],
  })
);
const name = (i: number) => data.labels[data.labelIdx[i]];
const shown = (m: TreeModel, expanded: number[]) => {
  const rows = flatten(m, new Set(expanded));
  return Array.from(rows.node.subarray(0, rows.count), name);
};

describe('flatten', () => {
  it('shows the top, then the children of expanded nodes only, in depth-first order', () => {
    const m = new TreeModel(data, { column: 'headTotal', desc: true });
    expect(shown(m, [])).toEqual(['total']);
    expect(shown(m, [0])).toEqual(['total', 'main', 'gc']);
    expect(shown(m, [0, 1])).toEqual(['total', 'main', 'a', 'b', 'c', 'd', 'gc']);
    // A collapsed parent hides an expanded child's children.
    expect(shown(m, [1])).toEqual(['total']);
  });

  it('gives each row its place among its siblings (aria-posinset and aria-setsize)', () => {
    const rows = flatten(new TreeModel(data, { column: 'headTotal', desc: true }), new Set([0, 1]));
    const places = Array.from(rows.node.subarray(0, rows.count), (i, r) => [
      name(i),
      rows.posInSet[r],
      rows.setSize[r],
    ]);
    expect(places).toEqual([
      ['total', 1, 1],
      ['main', 1, 2],
      ['a', 1, 4],
      ['b', 2, 4],
      ['c', 3, 4],
      ['d', 4, 4],
      ['gc', 2, 2],
    ]);
    expect(rows.rowOf(4)).toBe(4);
    expect(rows.rowOf(99)).toBe(-1);
  });
});

describe('sorting', () => {
  const sorted = (column: TreeColumn, desc: boolean) =>
    Array.from(new TreeModel(data, { column, desc }).children(1), name);

  it.each([
    // |delta| descending: the largest change either way first; ties in the graph's order.
    ['delta', true, ['c', 'd', 'a', 'b']],
    ['delta', false, ['a', 'b', 'd', 'c']],
    ['headTotal', true, ['a', 'b', 'c', 'd']],
    ['baseTotal', true, ['a', 'b', 'd', 'c']],
    ['headSelf', false, ['d', 'c', 'b', 'a']],
    ['baseSelf', false, ['c', 'd', 'b', 'a']],
    ['name', false, ['a', 'b', 'c', 'd']],
    ['name', true, ['d', 'c', 'b', 'a']],
    // q descending: the most significant first.
    ['q', true, ['c', 'd', 'a', 'b']],
    // The interval by the change it is sure of: c at least +0.15, d -0.08, a and b none.
    ['ci', true, ['c', 'd', 'a', 'b']],
  ])('by %s (descending: %s)', (column, desc, want) => {
    expect(sorted(column as TreeColumn, desc as boolean)).toEqual(want);
  });

  it('opens a diff on the largest change first', () => {
    expect(defaultSort(data)).toEqual({ column: 'delta', desc: true });
  });
});

describe('search', () => {
  it('keeps the matches and their ancestors only', () => {
    const found = search(data, { text: 'c', exact: false })!;
    const keep = keepOf(data, found.match);
    expect(Array.from(keep)).toEqual([1, 1, 0, 0, 1, 0, 1]);
    const m = new TreeModel(data, defaultSort(data), keep);
    expect(shown(m, [0, 1])).toEqual(['total', 'main', 'c', 'gc']);
    expect(m.hasChildren(1)).toBe(true);
    expect(m.hasChildren(6)).toBe(false);
  });
});

describe('treeKey', () => {
  const model = new TreeModel(data, { column: 'headTotal', desc: true });
  const parent = parentsOf(data);
  const walk = (start: TreeState, keys: string[]) =>
    keys.reduce((s, k) => treeKey(s, k, flatten(model, s.expanded), model, parent), start);
  const closed: TreeState = { focused: -1, expanded: new Set() };

  it('finds the parents', () => {
    expect(Array.from(parent)).toEqual([-1, 0, 1, 1, 1, 1, 0]);
  });

  it('starts at the first row, expands with Right, enters with Right, moves with Down', () => {
    const s = walk(closed, ['ArrowDown', 'ArrowRight', 'ArrowRight', 'ArrowDown']);
    expect(name(s.focused)).toBe('gc');
    expect([...s.expanded]).toEqual([0]);
  });

  it('collapses with Left, then goes to the parent; Right on a leaf does nothing', () => {
    let s = walk(closed, ['Home', 'ArrowRight', 'ArrowDown', 'ArrowRight', 'ArrowDown']);
    expect(name(s.focused)).toBe('a');
    expect(walk(s, ['ArrowRight'])).toBe(s);
    s = walk(s, ['ArrowLeft']);
    expect(name(s.focused)).toBe('main');
    s = walk(s, ['ArrowLeft']);
    expect([...s.expanded]).toEqual([0]);
    expect(name(s.focused)).toBe('main');
    s = walk(s, ['ArrowLeft', 'ArrowLeft']);
    expect(name(s.focused)).toBe('total');
    expect(s.expanded.size).toBe(0);
  });

  it('goes to the first and last row with Home and End, toggles with Space, expands siblings with *', () => {
    let s = walk(closed, ['Home', ' ', 'End']);
    expect(name(s.focused)).toBe('gc');
    s = walk(s, ['ArrowUp', '*']);
    expect(name(s.focused)).toBe('main');
    expect([...s.expanded].sort()).toEqual([0, 1]);
    s = walk(s, ['End', 'PageUp']);
    expect(name(s.focused)).toBe('total');
    s = walk(s, [' ']);
    expect(s.expanded.has(0)).toBe(false);
    expect(walk(s, ['x'])).toBe(s);
  });

  it('stays on the first and last row at the ends', () => {
    const s = walk(closed, ['Home', 'ArrowUp']);
    expect(name(s.focused)).toBe('total');
    expect(name(walk(s, ['ArrowDown', 'End', 'ArrowDown']).focused)).toBe('total');
  });

  it('withAncestors opens the path to a node', () => {
    const e = withAncestors(new Set(), parent, 4);
    expect([...e].sort()).toEqual([0, 1]);
    expect(withAncestors(e, parent, 3)).toBe(e);
  });
});
