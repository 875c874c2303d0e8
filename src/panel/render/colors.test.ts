import { FieldType } from '@grafana/data';

import { diffRows, flameFrame, recursiveRows } from '../../testing/frames';
import { toFlameData } from '../model/flameData';
import {
  DIFF_STEPS,
  autoDiffScale,
  diffBucket,
  diffColorIndex,
  diffPaletteCSS,
  diffRGB,
  fnv1a,
  packageColorIndex,
  NEUTRAL,
  NodeColors,
  selfColorIndex,
} from './colors';

describe('diff colours', () => {
  it.each([
    ['default', -1, [0, 170, 0]],
    ['default', 0, [148, 142, 142]],
    ['default', 1, [200, 0, 0]],
    ['default', 5, [200, 0, 0]],
    ['colorBlind', -1, [26, 133, 255]],
    ['colorBlind', 1, [230, 159, 0]],
  ] as const)('%s palette at t=%d', (palette, t, want) => {
    expect(diffRGB(t, palette)).toEqual(want);
  });

  it('is linear and symmetric around 0', () => {
    // halfway between grey (148,142,142) and each end
    expect(diffRGB(0.5, 'default')).toEqual([174, 71, 71]);
    expect(diffRGB(-0.5, 'default')).toEqual([74, 156, 71]);
    expect(diffBucket(0.05, 0.1) - DIFF_STEPS).toBe(DIFF_STEPS - diffBucket(-0.05, 0.1));
  });

  it.each([
    [0, 0.1, DIFF_STEPS],
    [0.1, 0.1, 2 * DIFF_STEPS],
    [-0.3, 0.1, 0],
    [0.05, 0.1, 75],
    [0.05, 0, DIFF_STEPS],
  ])('diffBucket(%d, scale %d) = %d', (delta, scale, want) => {
    expect(diffBucket(delta, scale)).toBe(want);
  });

  it('colours only-head nodes slowest and only-base nodes fastest, whatever the scale', () => {
    const d = toFlameData(flameFrame(diffRows));
    const idx = diffColorIndex(d, 1);
    const byLabel = (l: string) => idx.keyOf(d.labels.indexOf(l));
    expect(byLabel('c')).toBe(2 * DIFF_STEPS); // only in head
    expect(byLabel('gc')).toBe(2 * DIFF_STEPS);
    expect(byLabel('d')).toBe(0); // only in base
    expect(byLabel('a')).toBe(DIFF_STEPS); // unchanged: grey
    expect(diffPaletteCSS('default')[byLabel('c')]).toBe('rgb(200, 0, 0)');
    expect(diffPaletteCSS('default')[byLabel('d')]).toBe('rgb(0, 170, 0)');
  });

  it('greys every insignificant node when asked, whatever its delta', () => {
    const sig = {
      name: 'significant',
      type: FieldType.boolean,
      values: [null, true, false, false, false, true, false],
    };
    const d = toFlameData(flameFrame(diffRows, { extra: [sig] }));
    const greyed = diffColorIndex(d, 0.1, true);
    const byLabel = (idx: NodeColors, l: string) => idx.keyOf(d.labels.indexOf(l));
    expect(byLabel(greyed, 'c')).toBe(NEUTRAL); // only in head, not significant
    expect(byLabel(greyed, 'gc')).toBe(NEUTRAL);
    expect(byLabel(greyed, 'total')).toBe(NEUTRAL); // no test possible
    expect(byLabel(greyed, 'd')).toBe(0); // significant: keeps its colour
    expect(byLabel(greyed, 'main')).toBe(2 * DIFF_STEPS);
    expect(byLabel(diffColorIndex(d, 0.1, false), 'c')).toBe(2 * DIFF_STEPS);
    expect(autoDiffScale(d, true)).toBeCloseTo(0.1); // main only

    // A culprit's site keeps its colour although its node is not significant.
    const c = new Map([[d.labels.indexOf('c'), 'c']]); // labels are in node order here
    const withCulprit = diffColorIndex(d, 0.1, true, c);
    expect(byLabel(withCulprit, 'c')).toBe(2 * DIFF_STEPS);
    expect(byLabel(withCulprit, 'gc')).toBe(NEUTRAL);
    expect(byLabel(withCulprit, 'd')).toBe(0);
  });

  it('autoDiffScale is the largest |delta| of nodes on both sides', () => {
    expect(autoDiffScale(toFlameData(flameFrame(diffRows)))).toBeCloseTo(0.2);
    expect(autoDiffScale(toFlameData(flameFrame(recursiveRows)))).toBe(0.001);
  });
});

describe('single graph colours', () => {
  it('colours by the backend package field; a frame without one by label', () => {
    const rows: Array<[number, string, number, number]> = [
      [0, 'java/lang/Thread.run', 3, 0],
      [1, 'java/lang/Object.wait', 2, 2],
      [1, 'java/lang/Thread.run', 1, 1],
    ];
    const pkg = {
      name: 'package',
      type: FieldType.enum,
      values: [0, 0, 0],
      config: { type: { enum: { text: ['java/lang'] } } },
    };
    const withPkg = packageColorIndex(toFlameData(flameFrame(rows, { extra: [pkg] })));
    expect(new Set([0, 1, 2].map((i) => withPkg.keyOf(i))).size).toBe(1);
    const byLabel = packageColorIndex(toFlameData(flameFrame(rows)));
    expect(byLabel.keyOf(0)).toBe(byLabel.keyOf(2));
  });

  it('hashes are stable, so a package keeps its colour', () => {
    expect(fnv1a('runtime')).toBe(fnv1a('runtime'));
    expect(fnv1a('')).toBe(0x811c9dc5);
    expect(fnv1a('a')).toBe(0xe40c292c);
  });

  it('selfColorIndex grows with the self share', () => {
    const d = toFlameData(flameFrame(recursiveRows));
    const self = selfColorIndex(d.base);
    expect([0, 1, 2, 3, 4].map((i) => self.keyOf(i))).toEqual([0, 10, 6, 21, 50]);
  });
});

// CIELAB distance (CIE76) between two sRGB colours as a viewer with a
// colour vision deficiency sees them (Machado, Oliveira, Fernandes 2009,
// severity 1, applied to linear RGB). About 2.3 is just noticeable; the
// palettes' colours must stay far apart, well beyond that.
type Vision = 'normal' | 'deuteranopia' | 'protanopia' | 'tritanopia';
const machado: Record<Exclude<Vision, 'normal'>, number[][]> = {
  deuteranopia: [
    [0.367322, 0.860646, -0.227968],
    [0.280085, 0.672501, 0.047413],
    [-0.01182, 0.04294, 0.968881],
  ],
  protanopia: [
    [0.152286, 1.052583, -0.204868],
    [0.114503, 0.786281, 0.099216],
    [-0.003882, -0.048116, 1.051998],
  ],
  tritanopia: [
    [1.255528, -0.076749, -0.178779],
    [-0.078411, 0.930809, 0.147602],
    [0.004733, 0.691367, 0.3039],
  ],
};
const toLinear = (c: number) => (c / 255 <= 0.04045 ? c / 255 / 12.92 : ((c / 255 + 0.055) / 1.055) ** 2.4);

function lab(rgb: readonly number[], vision: Vision): number[] {
  let l = rgb.map(toLinear);
  if (vision !== 'normal') {
    const m = machado[vision];
    l = m.map((row) => Math.min(1, Math.max(0, row[0] * l[0] + row[1] * l[1] + row[2] * l[2])));
  }
  const [r, g, b] = l;
  const xyz = [
    (0.4124 * r + 0.3576 * g + 0.1805 * b) / 0.95047,
    0.2126 * r + 0.7152 * g + 0.0722 * b,
    (0.0193 * r + 0.1192 * g + 0.9505 * b) / 1.08883,
  ];
  const [fx, fy, fz] = xyz.map((t) => (t > 0.008856 ? Math.cbrt(t) : 7.787 * t + 16 / 116));
  return [116 * fy - 16, 500 * (fx - fy), 200 * (fy - fz)];
}

const deltaE = (a: readonly number[], b: readonly number[], vision: Vision) =>
  Math.hypot(...lab(a, vision).map((v, k) => v - lab(b, vision)[k]));

describe('colour-blind palette', () => {
  const visions: Vision[] = ['normal', 'deuteranopia', 'protanopia', 'tritanopia'];
  const [fast, grey, slow] = [-1, 0, 1].map((t) => diffRGB(t, 'colorBlind'));

  it.each(visions)('keeps noise grey apart from both ends and the ends apart, for %s vision', (vision) => {
    expect(deltaE(grey, fast, vision)).toBeGreaterThan(30);
    expect(deltaE(grey, slow, vision)).toBeGreaterThan(30);
    expect(deltaE(fast, slow, vision)).toBeGreaterThan(60);
  });

  it('is needed: red and green fall together under deuteranopia', () => {
    const [green, red] = [-1, 1].map((t) => diffRGB(t, 'default'));
    expect(deltaE(green, red, 'normal')).toBeGreaterThan(100);
    expect(deltaE(green, red, 'deuteranopia')).toBeLessThan(20);
  });

  it('is blue for faster and orange for slower', () => {
    expect(fast[2]).toBeGreaterThan(fast[0] + 150);
    expect(slow[0]).toBeGreaterThan(200);
    expect(slow[1]).toBeGreaterThan(100);
    expect(slow[2]).toBeLessThan(50);
  });
});
