import { FlameData, Side } from '../model/flameData';

/** Diff palettes: red-grey-green, or blue-grey-orange for colour-blind users. */
export type Palette = 'default' | 'colorBlind';

/** How single (non-diff) graphs are coloured. */
export type SingleColorBy = 'package' | 'self';

type RGB = [number, number, number];

const grey: RGB = [148, 142, 142];
// [faster end, slower end]: faster is green (or blue), slower red (or
// orange). Red and green fall together for the one man in twelve with a
// red-green deficiency; Grafana's blue and Okabe and Ito's orange stay
// apart from each other and from the noise grey under every common
// deficiency (colors.test.ts measures it).
const diffEnds: Record<Palette, [RGB, RGB]> = {
  default: [
    [0, 170, 0],
    [200, 0, 0],
  ],
  colorBlind: [
    [26, 133, 255],
    [230, 159, 0],
  ],
};

/** Colour steps on each side of 0: the scale is linear, drawn in 2*DIFF_STEPS+1 buckets. */
export const DIFF_STEPS = 50;

function mix(a: RGB, b: RGB, t: number): RGB {
  return [0, 1, 2].map((k) => Math.round(a[k] + (b[k] - a[k]) * t)) as RGB;
}

function css([r, g, b]: RGB): string {
  return `rgb(${r}, ${g}, ${b})`;
}

/**
 * diffRGB is the linear scale: t in [-1, 1] (clamped) goes from the faster end
 * (t=-1) through grey (t=0) to the slower end (t=1).
 */
export function diffRGB(t: number, palette: Palette): RGB {
  const [fast, slow] = diffEnds[palette];
  const c = Math.max(-1, Math.min(1, t));
  return c >= 0 ? mix(grey, slow, c) : mix(grey, fast, -c);
}

/** diffPaletteCSS lists the bucket colours, index 0 = fastest, 2*DIFF_STEPS = slowest. */
export function diffPaletteCSS(palette: Palette): string[] {
  const out: string[] = [];
  for (let b = 0; b <= 2 * DIFF_STEPS; b++) {
    out.push(css(diffRGB(b / DIFF_STEPS - 1, palette)));
  }
  return out;
}

/** diffBucket maps a delta onto a bucket, saturating at ±scale. */
export function diffBucket(delta: number, scale: number): number {
  const t = scale > 0 ? Math.max(-1, Math.min(1, delta / scale)) : 0;
  return Math.round((t + 1) * DIFF_STEPS);
}

/** Smallest automatic scale, so that rounding noise does not look like a change. */
const MIN_SCALE = 1e-3;

/**
 * autoDiffScale is the largest |delta| among nodes present on both sides
 * (nodes on one side only take the end colours anyway), at least 0.1%; with
 * significantOnly and statistics, among significant nodes and culprit sites
 * only (the others are grey, so their noise must not flatten the scale).
 */
export function autoDiffScale(
  data: FlameData,
  significantOnly = false,
  culprits?: ReadonlyMap<number, unknown>
): number {
  let m = 0;
  if (!data.head) {
    return MIN_SCALE;
  }
  const sig = significantOnly ? data.stats?.significant : undefined;
  const base = data.base.total;
  const head = data.head.total;
  const delta = data.delta;
  for (let i = 0; i < data.n; i++) {
    // The cheap tests first: a culprit is looked up only for a delta that would raise the scale.
    const d = Math.abs(delta[i]);
    if (d > m && base[i] > 0 && head[i] > 0 && (!sig || sig[i] === 1 || culprits?.has(i))) {
      m = d;
    }
  }
  return Math.max(m, MIN_SCALE);
}

/** NEUTRAL is the bucket of grey: no change, or a change the statistics call noise. */
export const NEUTRAL = DIFF_STEPS;

/**
 * NodeColors is each node's index into the palette, computed the first time
 * a drawing asks for it: the first frame of a million-node tree colours the
 * few thousand nodes it draws, not the million it has.
 */
export interface NodeColors {
  keyOf(i: number): number;
}

/** Not yet computed: no palette has 255 colours. */
const UNSET = 255;

function lazyColors(n: number, colour: (i: number) => number): NodeColors {
  const keys = new Uint8Array(n).fill(UNSET);
  return {
    keyOf(i) {
      let k = keys[i];
      if (k === UNSET) {
        k = keys[i] = colour(i);
      }
      return k;
    },
  };
}

/**
 * diffColorIndex colours every node of a diff from its delta: a node only in
 * head takes the slowest colour, a node only in base the fastest; both views
 * (head and base) use the same indices. With significantOnly and statistics
 * in the frame, every node not significant is grey however large its delta,
 * but the sites of the diff's culprits (culpritSites).
 */
export function diffColorIndex(
  data: FlameData,
  scale: number,
  significantOnly = false,
  culprits?: ReadonlyMap<number, unknown>
): NodeColors {
  const base = data.base.total;
  const head = data.head?.total ?? base;
  const { delta } = data;
  const sig = significantOnly ? data.stats?.significant : undefined;
  return lazyColors(data.n, (i) => {
    const b = base[i];
    const h = head[i];
    if (sig && sig[i] !== 1 && !culprits?.has(i)) {
      return NEUTRAL;
    } else if (b === 0 && h > 0) {
      return 2 * DIFF_STEPS;
    } else if (h === 0 && b > 0) {
      return 0;
    }
    return diffBucket(delta[i], scale);
  });
}

// Hues spread around the wheel so that neighbouring packages differ.
const packageHues = [
  24, 34, 194, 163, 211, 246, 305, 47, 104, 39, 217, 24, 0, 204, 303, 252, 104, 41, 191, 24, 2, 207, 306, 255,
];

/** packagePaletteCSS returns the package colours, lighter for the light theme. */
export function packagePaletteCSS(light: boolean): string[] {
  return packageHues.map((h, k) => `hsl(${h}, ${55 + (k % 3) * 10}%, ${(light ? 72 : 58) + (k % 2) * 5}%)`);
}

/** fnv1a is a stable 32-bit string hash, so a package keeps its colour across graphs. */
export function fnv1a(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

/**
 * packageColorIndex colours every node by the stable hash of its package,
 * the backend's `package` field (the evolution matrix's rule). A frame from
 * another source has no such field: its nodes are coloured by label.
 */
export function packageColorIndex(data: FlameData): NodeColors {
  const { idx, names } = data.packages ?? { idx: data.labelIdx, names: data.labels };
  const perName = new Uint8Array(names.length).fill(UNSET);
  return {
    keyOf(i) {
      const p = idx[i];
      let k = perName[p];
      if (k === UNSET) {
        k = perName[p] = fnv1a(names[p]) % packageHues.length;
      }
      return k;
    },
  };
}

/** selfPaletteCSS goes from pale yellow (no self time) to red (all self time). */
export function selfPaletteCSS(): string[] {
  const out: string[] = [];
  for (let b = 0; b <= DIFF_STEPS; b++) {
    const t = b / DIFF_STEPS;
    out.push(`hsl(${Math.round(50 - 50 * t)}, 100%, ${Math.round(65 + 7 * t)}%)`);
  }
  return out;
}

/** selfColorIndex colours a node by its self share of its own total. */
export function selfColorIndex(side: Side): NodeColors {
  const { total, self } = side;
  return lazyColors(total.length, (i) => {
    const t = total[i] > 0 ? self[i] / total[i] : 0;
    return Math.round(Math.max(0, Math.min(1, t)) * DIFF_STEPS);
  });
}
