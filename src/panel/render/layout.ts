import { FlameData, Side } from '../model/flameData';

/**
 * A viewport in layout units: x0..x1 is the visible value range, scrollY the
 * pixels scrolled down from level 0. One affine transform maps it to pixels:
 * px = (x - x0) * width / (x1 - x0).
 */
export interface Viewport {
  x0: number;
  x1: number;
  scrollY: number;
}

/**
 * The canvas size in CSS pixels and the height of one level; flipped draws
 * the root at the bottom and its children above it (a sandwich's callers).
 */
export interface Geometry {
  width: number;
  height: number;
  rowHeight: number;
  flipped?: boolean;
}

/** rowTop is the pixel top of a level's row; scrolling moves away from the root either way. */
export function rowTop(geo: Geometry, level: number, scrollY: number): number {
  const y = level * geo.rowHeight - scrollY;
  return geo.flipped ? geo.height - geo.rowHeight - y : y;
}

/** Nodes narrower than this many pixels are not drawn, nor are their subtrees. */
export const MIN_NODE_PX = 1;

/** fullView shows the whole side. */
export function fullView(side: Side): Viewport {
  return { x0: 0, x1: side.rootTotal > 0 ? side.rootTotal : 1, scrollY: 0 };
}

/** zoomTo fits node i to the width, keeping the vertical scroll. */
export function zoomTo(side: Side, i: number, scrollY = 0): Viewport {
  const w = side.total[i];
  if (!(w > 0)) {
    return fullView(side);
  }
  const x = side.startOf(i);
  return { x0: x, x1: x + w, scrollY };
}

/** scaleOf is pixels per value unit. */
export function scaleOf(view: Viewport, geo: Geometry): number {
  return geo.width / (view.x1 - view.x0);
}

/**
 * visibleCap bounds how many nodes one view draws: a row holds disjoint
 * nodes at least MIN_NODE_PX wide, so the buffers follow the canvas, not
 * the tree.
 */
export function visibleCap(data: FlameData, geo: Geometry): number {
  const rows = Math.floor(geo.height / geo.rowHeight) + 2;
  return Math.min(data.n, (Math.ceil(geo.width / MIN_NODE_PX) + 2) * rows);
}

/**
 * visibleNodes lists, in pre-order, the nodes to draw: at least MIN_NODE_PX
 * wide, inside the viewport horizontally and not below it. A node that fails
 * is skipped with its whole subtree (children lie within their parent and one
 * level lower), so the cost follows what is drawn, not the tree size. The
 * walk places the nodes as it goes (a node starts where its previous sibling
 * ends, its first child where it starts): x gets each listed node's start.
 * out and x are reused when large enough (visibleCap); the result is a view of out.
 */
export function visibleNodes(
  data: FlameData,
  side: Side,
  view: Viewport,
  geo: Geometry,
  out?: Int32Array,
  x?: Float64Array
): Int32Array {
  const cap = visibleCap(data, geo);
  const buf = out && out.length >= cap ? out : new Int32Array(cap);
  const xs = x && x.length >= cap ? x : new Float64Array(cap);
  const scale = scaleOf(view, geo);
  const minWidth = MIN_NODE_PX / scale;
  const { total } = side;
  const { level, end } = data;
  // next[l] is where the next node at level l starts.
  const next = new Float64Array(data.maxLevel + 2);
  const firstRow = Math.floor(view.scrollY / geo.rowHeight);
  const lastRow = Math.floor((view.scrollY + geo.height) / geo.rowHeight);
  let k = 0;
  let i = 0;
  while (i < data.n) {
    const w = total[i];
    const l = level[i];
    const at = next[l];
    next[l] = at + w;
    if (w < minWidth || at + w <= view.x0 || at >= view.x1 || l > lastRow) {
      i = end[i];
      continue;
    }
    next[l + 1] = at;
    if (l >= firstRow) {
      xs[k] = at;
      buf[k++] = i;
    }
    i++;
  }
  return buf.subarray(0, k);
}

/**
 * hitTest is the inverse transform: the node under pixel (px, py), or -1.
 * It descends only into the subtree that contains the point, placing the
 * nodes it passes as visibleNodes does.
 */
export function hitTest(data: FlameData, side: Side, view: Viewport, geo: Geometry, px: number, py: number): number {
  if (px < 0 || px >= geo.width || py < 0) {
    return -1;
  }
  const row = geo.flipped
    ? Math.ceil((geo.height - py + view.scrollY) / geo.rowHeight) - 1
    : Math.floor((py + view.scrollY) / geo.rowHeight);
  const x = view.x0 + px / scaleOf(view, geo);
  // at is where node i starts: its previous siblings' widths after its parent's start.
  let at = 0;
  let i = 0;
  while (i < data.n) {
    const w = side.total[i];
    if (!(w > 0 && x >= at && x < at + w)) {
      const l = data.level[i];
      at += w;
      i = data.end[i];
      if (i < data.n && data.level[i] < l) {
        return -1; // no child of the node under the point is: it is that node's self
      }
      continue;
    }
    if (data.level[i] === row) {
      return i;
    }
    i++;
  }
  return -1;
}

function clampView(x0: number, x1: number, scrollY: number, rootTotal: number): Viewport {
  const full = rootTotal > 0 ? rootTotal : 1;
  // Never zoom in so far that one pixel is below float precision of the range.
  const w = Math.min(full, Math.max(x1 - x0, full * 1e-12));
  const left = Math.min(Math.max(0, x0), full - w);
  return { x0: left, x1: left + w, scrollY: Math.max(0, scrollY) };
}

/** pan moves the view by a pixel drag (positive dx drags content right). */
export function pan(view: Viewport, geo: Geometry, dx: number, dy: number, rootTotal: number): Viewport {
  const d = dx / scaleOf(view, geo);
  return clampView(view.x0 - d, view.x1 - d, view.scrollY - dy, rootTotal);
}

/** zoomAt scales the view by factor (<1 zooms in) keeping pixel px fixed. */
export function zoomAt(view: Viewport, geo: Geometry, factor: number, px: number, rootTotal: number): Viewport {
  const x = view.x0 + px / scaleOf(view, geo);
  return clampView(x - (x - view.x0) * factor, x + (view.x1 - x) * factor, view.scrollY, rootTotal);
}

/** contentHeight is the height of all levels, for the scroll range. */
export function contentHeight(data: FlameData, geo: Geometry): number {
  return (data.maxLevel + 1) * geo.rowHeight;
}
