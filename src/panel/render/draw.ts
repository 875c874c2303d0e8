import { FlameData, Side } from '../model/flameData';
import { NodeColors } from './colors';
import { Geometry, Viewport, rowTop, scaleOf, visibleCap, visibleNodes } from './layout';

/** What to draw: one side of the data through a viewport. */
export interface Scene {
  data: FlameData;
  side: Side;
  view: Viewport;
  geo: Geometry;
  /** Per-node index into style.colors. */
  colorIndex: NodeColors;
  /** Search matches; when set, other nodes are dimmed. */
  match?: Uint8Array;
  /** The keyboard's node, outlined; -1 or undefined for none. */
  selected?: number;
}

/** Colours and font of a drawing, from the theme and the colour scheme. */
export interface DrawStyle {
  colors: string[];
  dim: string;
  text: string;
  font: string;
  /** Outline of the keyboard's node. */
  outline: string;
}

/** Reusable buffers so that a redraw allocates nothing; draw grows them to what a view can draw (visibleCap). */
export interface Scratch {
  visible: Int32Array;
  /** The visible nodes' starts, in value units. */
  x: Float64Array;
  order: Int32Array;
}

/** newScratch sizes buffers for up to n nodes; draw grows them for a larger canvas. */
export function newScratch(n: number): Scratch {
  return { visible: new Int32Array(n), x: new Float64Array(n), order: new Int32Array(n) };
}

/** Labels are drawn only in nodes at least this wide. */
const MIN_LABEL_PX = 24;
const PAD = 3;

/** clip keeps canvas coordinates small: far off-screen values slow rasterising. */
function clip(x: number, w: number, width: number): [number, number] {
  const l = Math.max(x, -1);
  const r = Math.min(x + w, width + 1);
  return [l, r - l];
}

/**
 * draw paints the scene: rectangles grouped by colour (one fill per colour),
 * then labels where they fit. It returns how many nodes it drew.
 */
export function draw(ctx: CanvasRenderingContext2D, scene: Scene, style: DrawStyle, scratch: Scratch): number {
  const { data, side, view, geo, colorIndex, match, selected } = scene;
  const cap = visibleCap(data, geo);
  if (scratch.visible.length < cap) {
    Object.assign(scratch, newScratch(cap));
  }
  const nodes = visibleNodes(data, side, view, geo, scratch.visible, scratch.x);
  const starts = scratch.x;
  const scale = scaleOf(view, geo);
  const dimKey = style.colors.length;
  const keyOf = (i: number) => (match && !match[i] ? dimKey : colorIndex.keyOf(i));

  // Counting sort of the visible nodes (their places in nodes) by colour key.
  const counts = new Int32Array(dimKey + 2);
  for (let k = 0; k < nodes.length; k++) {
    counts[keyOf(nodes[k]) + 1]++;
  }
  for (let c = 1; c < counts.length; c++) {
    counts[c] += counts[c - 1];
  }
  const fill = counts.slice();
  const order = scratch.order;
  for (let k = 0; k < nodes.length; k++) {
    order[fill[keyOf(nodes[k])]++] = k;
  }

  ctx.clearRect(0, 0, geo.width, geo.height);
  const h = geo.rowHeight - 1;
  for (let c = 0; c <= dimKey; c++) {
    if (counts[c + 1] === counts[c]) {
      continue;
    }
    ctx.fillStyle = c === dimKey ? style.dim : style.colors[c];
    ctx.beginPath();
    for (let k = counts[c]; k < counts[c + 1]; k++) {
      const i = nodes[order[k]];
      const w = side.total[i] * scale;
      const [x, cw] = clip((starts[order[k]] - view.x0) * scale, w, geo.width);
      ctx.rect(x, rowTop(geo, data.level[i], view.scrollY), w > 3 ? cw - 1 : cw, h);
    }
    ctx.fill();
  }

  ctx.font = style.font;
  ctx.fillStyle = style.text;
  ctx.textBaseline = 'middle';
  const charW = ctx.measureText('abcdefghijklmnopqrstuvwxyz').width / 26 || 7;
  for (let k = 0; k < nodes.length; k++) {
    const i = nodes[k];
    const [x, w] = clip((starts[k] - view.x0) * scale, side.total[i] * scale, geo.width);
    if (w < MIN_LABEL_PX) {
      continue;
    }
    const label = fitLabel(data.labels[data.labelIdx[i]], Math.floor((w - 2 * PAD) / charW));
    if (label) {
      ctx.fillText(label, x + PAD, rowTop(geo, data.level[i], view.scrollY) + geo.rowHeight / 2);
    }
  }
  if (selected !== undefined && selected >= 0 && selected < data.n) {
    const [x, w] = clip((side.startOf(selected) - view.x0) * scale, side.total[selected] * scale, geo.width);
    ctx.strokeStyle = style.outline;
    ctx.lineWidth = 2;
    ctx.strokeRect(x + 1, rowTop(geo, data.level[selected], view.scrollY) + 1, Math.max(w - 2, 2), h - 2);
  }
  return nodes.length;
}

/** fitLabel truncates a label to maxChars with an ellipsis; '' if nothing useful fits. */
export function fitLabel(label: string, maxChars: number): string {
  if (label.length <= maxChars) {
    return label;
  }
  return maxChars >= 3 ? label.slice(0, maxChars - 1) + '…' : '';
}
