import { diffRows, flameFrame } from '../../testing/frames';
import { toFlameData } from '../model/flameData';
import { fromShared, toShared } from './viewSync';

// diffRows: total(0) > main(1) > a(2) b(3) c(4, head only) d(5, base only); total > gc(6, head only).
// Base: total 100, main 0..100, a 0..60, b 60..90, d 90..100. Head: total 120, main 0..110, a 0..60, b 60..90, c 90..110, gc 110..120.
const data = toFlameData(flameFrame(diffRows));
const base = data.base;
const head = data.head!;

describe('the split view shared between base and head', () => {
  it('zoomed onto a node on one side is zoomed onto it on the other', () => {
    const s = toShared(data, base, { x0: 60, x1: 90, scrollY: 20 }, 3);
    expect(s).toEqual({ anchor: 3, u0: 0, u1: 1, scrollY: 20 });
    expect(fromShared(data, head, s)).toEqual({ x0: 60, x1: 90, scrollY: 20 });
  });

  it('a pan is the same share of the anchor on both sides', () => {
    // Half of main's width to the left on head (110 wide) is half of it on base (100 wide).
    const s = toShared(data, head, { x0: -55, x1: 55, scrollY: 0 }, 1);
    expect(s.u0).toBeCloseTo(-0.5);
    expect(fromShared(data, base, s)).toEqual({ x0: -50, x1: 50, scrollY: 0 });
  });

  it('a node absent on the other side anchors on its caller there', () => {
    // c is only in head: base shows its caller main.
    const s = toShared(data, head, { x0: 90, x1: 110, scrollY: 0 }, 4);
    expect(fromShared(data, base, s)).toEqual({ x0: 0, x1: 100, scrollY: 0 });
    // gc, only in head, under the root: base shows the root.
    expect(fromShared(data, base, toShared(data, head, { x0: 110, x1: 120, scrollY: 0 }, 6))).toEqual({
      x0: 0,
      x1: 100,
      scrollY: 0,
    });
  });
});
