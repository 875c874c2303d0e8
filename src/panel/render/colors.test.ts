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
  selfColorIndex,
} from './colors';

describe('diff colours', () => {
  it.each([
    ['default', -1, [0, 170, 0]],
    ['default', 0, [148, 142, 142]],
    ['default', 1, [200, 0, 0]],
    ['default', 5, [200, 0, 0]],
    ['colorBlind', -1, [26, 133, 255]],
    ['colorBlind', 1, [220, 50, 32]],
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
    const byLabel = (l: string) => idx[d.labels.indexOf(l)];
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
    const byLabel = (idx: Uint8Array, l: string) => idx[d.labels.indexOf(l)];
    expect(byLabel(greyed, 'c')).toBe(NEUTRAL); // only in head, not significant
    expect(byLabel(greyed, 'gc')).toBe(NEUTRAL);
    expect(byLabel(greyed, 'total')).toBe(NEUTRAL); // no test possible
    expect(byLabel(greyed, 'd')).toBe(0); // significant: keeps its colour
    expect(byLabel(greyed, 'main')).toBe(2 * DIFF_STEPS);
    expect(byLabel(diffColorIndex(d, 0.1, false), 'c')).toBe(2 * DIFF_STEPS);
    expect(autoDiffScale(d, true)).toBeCloseTo(0.1); // main only
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
    expect(new Set(withPkg).size).toBe(1);
    const byLabel = packageColorIndex(toFlameData(flameFrame(rows)));
    expect(byLabel[0]).toBe(byLabel[2]);
  });

  it('hashes are stable, so a package keeps its colour', () => {
    expect(fnv1a('runtime')).toBe(fnv1a('runtime'));
    expect(fnv1a('')).toBe(0x811c9dc5);
    expect(fnv1a('a')).toBe(0xe40c292c);
  });

  it('selfColorIndex grows with the self share', () => {
    const d = toFlameData(flameFrame(recursiveRows));
    expect(Array.from(selfColorIndex(d.base))).toEqual([0, 10, 6, 21, 50]);
  });
});
