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
  packageOf,
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

  it('autoDiffScale is the largest |delta| of nodes on both sides', () => {
    expect(autoDiffScale(toFlameData(flameFrame(diffRows)))).toBeCloseTo(0.2);
    expect(autoDiffScale(toFlameData(flameFrame(recursiveRows)))).toBe(0.001);
  });
});

describe('single graph colours', () => {
  it.each([
    ['github.com/x/y.(*T).M', 'github.com/x/y'],
    ['compress/flate.(*compressor).deflate', 'compress/flate'],
    ['runtime.mallocgc', 'runtime'],
    ['std::vector<int>::push_back', 'std::vector<int>'],
    ['java.util.HashMap.get', 'java'],
    ['main', 'main'],
  ])('packageOf(%s) = %s', (label, want) => {
    expect(packageOf(label)).toBe(want);
  });

  it('hashes are stable, so a package keeps its colour', () => {
    expect(fnv1a('runtime')).toBe(fnv1a('runtime'));
    expect(fnv1a('')).toBe(0x811c9dc5);
    expect(fnv1a('a')).toBe(0xe40c292c);
    const d = toFlameData(
      flameFrame([
        [0, 'runtime.a', 3, 0],
        [1, 'runtime.b', 2, 2],
        [1, 'net/http.c', 1, 1],
      ])
    );
    const idx = packageColorIndex(d);
    expect(idx[0]).toBe(idx[1]);
  });

  it('selfColorIndex grows with the self share', () => {
    const d = toFlameData(flameFrame(recursiveRows));
    expect(Array.from(selfColorIndex(d.base))).toEqual([0, 10, 6, 21, 50]);
  });
});
