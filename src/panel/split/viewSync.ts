import { FlameData, Side } from '../model/flameData';
import { parentOf } from '../model/focus';
import { Viewport, fullView } from '../render/layout';

/**
 * SharedView is the view the two graphs of a split share: which part of an
 * anchor node is in sight (u0..u1 of its width; 0..1 is the node itself,
 * beyond it its neighbours) and the vertical scroll. The sides' widths
 * differ, so a view in value units would not do: the anchor is the node
 * zoomed onto, the same call path on both sides.
 */
export interface SharedView {
  anchor: number;
  u0: number;
  u1: number;
  scrollY: number;
}

/** drawnAnchor is node i, or its nearest caller drawn on side (a node new in head has no width in base). */
function drawnAnchor(data: FlameData, side: Side, i: number): number {
  let a = i >= 0 && i < data.n ? i : 0;
  while (a > 0 && !(side.total[a] > 0)) {
    a = parentOf(data, a);
  }
  return Math.max(a, 0);
}

/** toShared is a side's viewport as the split shares it. */
export function toShared(data: FlameData, side: Side, v: Viewport, anchor: number): SharedView {
  const a = drawnAnchor(data, side, anchor);
  const w = side.total[a];
  if (!(w > 0)) {
    const full = side.rootTotal > 0 ? side.rootTotal : 1;
    return { anchor: 0, u0: v.x0 / full, u1: v.x1 / full, scrollY: v.scrollY };
  }
  const x = side.startOf(a);
  return { anchor: a, u0: (v.x0 - x) / w, u1: (v.x1 - x) / w, scrollY: v.scrollY };
}

/** fromShared is the shared view on a side: the same part of the same node. */
export function fromShared(data: FlameData, side: Side, s: SharedView): Viewport {
  const a = drawnAnchor(data, side, s.anchor);
  const w = side.total[a];
  if (!(w > 0)) {
    return { ...fullView(side), scrollY: s.scrollY };
  }
  const x = side.startOf(a);
  return { x0: x + s.u0 * w, x1: x + s.u1 * w, scrollY: s.scrollY };
}

/**
 * ViewSync links the graphs of a split: each publishes its view as the
 * user zooms and pans, the others follow without a React render.
 */
export class ViewSync {
  private readonly listeners = new Set<(v: SharedView, from: unknown) => void>();

  publish(v: SharedView, from: unknown): void {
    this.listeners.forEach((l) => l(v, from));
  }

  subscribe(l: (v: SharedView, from: unknown) => void): () => void {
    this.listeners.add(l);
    return () => {
      this.listeners.delete(l);
    };
  }
}
