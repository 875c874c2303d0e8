import { diffRows, flameFrame } from '../../testing/frames';
import { toFlameData } from '../model/flameData';
import { fullView, hitTest, pan, rowTop, visibleNodes, zoomAt, zoomTo } from './layout';

const data = toFlameData(flameFrame(diffRows));
const head = data.head!;
const geo = { width: 120, height: 100, rowHeight: 20 };
const labelsOf = (idx: Int32Array) => Array.from(idx, (i) => data.labels[data.labelIdx[i]]);

describe('visibleNodes', () => {
  it.each([
    ['head, full view: every node with a width', 'head', fullView(head), geo, ['total', 'main', 'a', 'b', 'c', 'gc']],
    [
      'base, full view: nodes only in head vanish',
      'base',
      fullView(data.base),
      { ...geo, width: 100 },
      ['total', 'main', 'a', 'b', 'd'],
    ],
    ['zoomed on b: siblings outside the view are culled', 'head', zoomTo(head, 3), geo, ['total', 'main', 'b']],
    [
      'too narrow: sub-pixel nodes and their subtrees go',
      'head',
      fullView(head),
      { ...geo, width: 5 },
      ['total', 'main', 'a', 'b'],
    ],
    [
      'short canvas: levels below the view are skipped',
      'head',
      fullView(head),
      { ...geo, height: 30 },
      ['total', 'main', 'gc'],
    ],
    ['scrolled: levels above the view are not drawn', 'head', { ...fullView(head), scrollY: 40 }, geo, ['a', 'b', 'c']],
  ] as const)('%s', (_, side, view, g, want) => {
    expect(labelsOf(visibleNodes(data, side === 'head' ? head : data.base, view, g))).toEqual(want);
  });

  it('places the nodes it lists as startOf does', () => {
    const x = new Float64Array(data.n);
    const nodes = visibleNodes(data, head, zoomTo(head, 3), geo, undefined, x);
    expect(Array.from(x.subarray(0, nodes.length))).toEqual(Array.from(nodes, (i) => head.startOf(i)));
  });

  it('skips whole subtrees: a culled parent hides children even if they would be wide enough', () => {
    const view = { x0: 110, x1: 120, scrollY: 0 }; // only gc's range
    expect(labelsOf(visibleNodes(data, head, view, geo))).toEqual(['total', 'gc']);
  });
});

describe('hitTest', () => {
  it.each([
    [5, 5, 'total'],
    [5, 25, 'main'],
    [65, 45, 'b'],
    [100, 45, 'c'],
    [115, 25, 'gc'],
  ])('finds the node under (%d, %d)', (x, y, want) => {
    expect(data.labels[data.labelIdx[hitTest(data, head, fullView(head), geo, x, y)]]).toBe(want);
  });

  it.each([
    [115, 45],
    [-1, 5],
    [5, 500],
  ])('returns -1 where no node is, (%d, %d)', (x, y) => {
    expect(hitTest(data, head, fullView(head), geo, x, y)).toBe(-1);
  });

  it.each([
    [5, 99, 'total'],
    [5, 80, 'total'],
    [5, 79, 'main'],
    [65, 55, 'b'],
    [115, 75, 'gc'],
  ])('flipped, finds the node under (%d, %d): the root is the bottom row', (x, y, want) => {
    const flipped = { ...geo, flipped: true };
    const i = hitTest(data, head, fullView(head), flipped, x, y);
    expect(data.labels[data.labelIdx[i]]).toBe(want);
    // And the node's row is where it is drawn.
    const top = rowTop(flipped, data.level[i], 0);
    expect(y >= top && y < top + geo.rowHeight).toBe(true);
  });

  it("returns -1 in a node's self, below it: not a child of the next node", () => {
    // main spans 0-6 with f at 0-4; gc spans 6-10 with h below it. x=5 is main's self.
    const d = toFlameData(
      flameFrame([
        [0, 'total', 10, 0],
        [1, 'main', 6, 2],
        [2, 'f', 4, 4],
        [1, 'gc', 4, 0],
        [2, 'h', 4, 4],
      ])
    );
    const g = { width: 100, height: 100, rowHeight: 20 };
    expect(hitTest(d, d.base, fullView(d.base), g, 50, 45)).toBe(-1);
    expect(d.labels[d.labelIdx[hitTest(d, d.base, fullView(d.base), g, 70, 45)]]).toBe('h');
  });

  it('inverts the zoomed transform', () => {
    const view = zoomTo(head, 3); // b fills the width
    expect(data.labels[data.labelIdx[hitTest(data, head, view, geo, 60, 45)]]).toBe('b');
  });
});

describe('view transforms', () => {
  it('zoomTo fits a node; a zero-width node gives the full view', () => {
    expect(zoomTo(head, 2)).toEqual({ x0: 0, x1: 60, scrollY: 0 });
    expect(zoomTo(data.base, 4)).toEqual(fullView(data.base));
  });

  it('pan moves by pixels and stays inside the graph', () => {
    const v = zoomTo(head, 2);
    expect(pan(v, geo, -60, 0, 120)).toEqual({ x0: 30, x1: 90, scrollY: 0 });
    expect(pan(v, geo, 60, 0, 120)).toEqual({ x0: 0, x1: 60, scrollY: 0 });
    expect(pan(v, geo, 0, -30, 120).scrollY).toBe(30);
  });

  it('zoomAt keeps the point under the cursor fixed', () => {
    const v = zoomAt(fullView(head), geo, 0.5, 60, 120);
    expect(v).toEqual({ x0: 30, x1: 90, scrollY: 0 });
    expect(zoomAt(v, geo, 10, 60, 120)).toEqual({ x0: 0, x1: 120, scrollY: 0 });
  });
});
