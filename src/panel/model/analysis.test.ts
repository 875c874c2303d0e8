import { FieldType, createDataFrame } from '@grafana/data';

import { diffRows, flameFrame } from '../../testing/frames';
import { toFlameData } from './flameData';
import { comparisonVars, measure, parseRuns, parseSummary, spread } from './runs';
import { search } from './search';
import { focusPath, isOther, move, nodeAtPath } from './focus';
import { isFunctionsFrame, parseFunctions, sortRows } from './functions';
import { flameFramesByVariant, frameVariant, variantOf } from './variants';

describe('search', () => {
  const d = toFlameData(flameFrame(diffRows));
  it.each([
    ['', false, undefined],
    ['A', false, 3], // total, main and a
    ['a', true, 1],
    ['zzz', false, 0],
  ])('"%s" (exact %s) matches %s nodes', (text, exact, count) => {
    expect(search(d, { text, exact })?.count).toBe(count);
  });
});

describe('functions', () => {
  const frame = createDataFrame({
    fields: [
      { name: 'function', type: FieldType.string, values: ['c', 'a', 'd'] },
      { name: 'selfBase', type: FieldType.number, values: [0, 60, 10] },
      { name: 'totalBase', type: FieldType.number, values: [0, 60, 10] },
      { name: 'selfHead', type: FieldType.number, values: [20, 50, 0], config: { unit: 'ns' } },
      { name: 'totalHead', type: FieldType.number, values: [20, 70, 0], config: { unit: 'ns' } },
      { name: 'delta', type: FieldType.number, values: [0.2, 0.1, -0.1] },
      { name: 'qValue', type: FieldType.number, values: [0.01, null, 0.3] },
      { name: 'significant', type: FieldType.boolean, values: [true, null, false] },
    ],
  });

  it('reads the rows in the engine order, nulls as NaN/null', () => {
    expect(isFunctionsFrame(frame)).toBe(true);
    expect(isFunctionsFrame(flameFrame(diffRows))).toBe(false);
    const f = parseFunctions(frame);
    expect(f).toMatchObject({ diff: true, stats: true, unit: 'ns' });
    expect(f.rows.map((r) => [r.name, r.rank, r.significant])).toEqual([
      ['c', 0, true],
      ['a', 1, null],
      ['d', 2, false],
    ]);
    expect(f.rows[1].qValue).toBeNaN();
  });

  it.each([
    ['rank', true, ['c', 'a', 'd']],
    ['delta', true, ['c', 'a', 'd']], // |delta|, ties in engine order
    ['delta', false, ['a', 'd', 'c']], // ties keep the engine order
    ['self', true, ['a', 'c', 'd']],
    ['total', true, ['a', 'c', 'd']],
    ['significance', true, ['c', 'd', 'a']], // q ascending, undefined last
    ['name', true, ['a', 'c', 'd']],
  ] as const)('sorts by %s (desc %s)', (key, desc, want) => {
    expect(sortRows(parseFunctions(frame).rows, key, desc).map((r) => r.name)).toEqual(want);
  });
});

describe('focus paths and keyboard moves', () => {
  const d = toFlameData(flameFrame([...diffRows.slice(0, 6), [2, 'other', 5, 5, 5, 5], diffRows[6]]));
  const at = (l: string) => d.labels.indexOf(l);
  it('a path runs from the root child down; an other node drills into its parent', () => {
    expect(focusPath(d, at('a'))).toEqual(['main', 'a']);
    expect(isOther(d, at('other'))).toBe(true);
    expect(focusPath(d, at('other'))).toEqual(['main']);
    expect(nodeAtPath(d, ['main', 'b'])).toBe(at('b'));
    expect(nodeAtPath(d, ['main', 'zzz'])).toBe(-1);
  });

  it.each([
    ['a', 'parent', 'main'],
    ['main', 'child', 'a'], // the widest callee
    ['a', 'next', 'b'],
    ['b', 'prev', 'a'],
    ['b', 'next', 'd'], // c has no base width: skipped on the base side
    ['main', 'next', 'main'], // gc has no base width either
    ['total', 'parent', 'total'],
  ] as const)('from %s, %s reaches %s on the base side', (from, m, want) => {
    expect(d.labels[d.labelIdx[move(d, d.base, at(from), m)]]).toBe(want);
  });
});

describe('variants', () => {
  it.each([
    [false, false, 'normal'],
    [true, false, 'inverted'],
    [false, true, 'collapsed'],
    [true, true, 'inverted+collapsed'],
  ])('inverted=%s collapsed=%s is %s', (i, c, want) => {
    expect(variantOf(i, c)).toBe(want);
  });

  it('indexes flame frames by meta.custom.variant; others are normal', () => {
    const runs = createDataFrame({ fields: [{ name: 'x', values: [1] }] });
    const plain = flameFrame(diffRows);
    const inv = flameFrame(diffRows, { variant: 'inverted' });
    const odd = flameFrame(diffRows, { variant: 'sideways' });
    const m = flameFramesByVariant([runs, inv, plain, odd]);
    expect([...m.keys()]).toEqual(['inverted', 'normal']);
    expect(m.get('normal')).toBe(plain);
    expect(frameVariant(odd)).toBe('normal');
  });
});

describe('runs', () => {
  const runsFrame = createDataFrame({
    fields: [
      { name: 'side', type: FieldType.string, values: ['base', 'base', 'head'] },
      { name: 'build', type: FieldType.string, values: ['1.3', '1.3', '1.4'] },
      { name: 'run', type: FieldType.string, values: ['r1', 'r2', 'r1'] },
      { name: 'duration', type: FieldType.number, values: [10, 12, 15] },
    ],
  });

  it('parses runs and their spread', () => {
    const runs = parseRuns(runsFrame);
    expect(runs.map((r) => `${r.side}:${r.build}/${r.run}=${r.duration}`)).toEqual([
      'base:1.3/r1=10',
      'base:1.3/r2=12',
      'head:1.4/r1=15',
    ]);
    expect(spread(runs)).toEqual([10, 15]);
    expect(spread([])).toBeUndefined();
  });

  it('plots the profile total when the frame has one, as the summary is about it', () => {
    const withTotal = createDataFrame({
      fields: [...runsFrame.fields, { name: 'total', type: FieldType.number, values: [1e9, 3e9, 2e9] }],
    });
    const runs = parseRuns(withTotal);
    expect(runs.map(measure)).toEqual([1e9, 3e9, 2e9]);
    expect(spread(runs)).toEqual([1e9, 3e9]);
  });

  it('rejects an unknown side', () => {
    const bad = createDataFrame({
      fields: runsFrame.fields.map((f) => (f.name === 'side' ? { ...f, values: ['left', 'base', 'head'] } : f)),
    });
    expect(() => parseRuns(bad)).toThrow(/row 0 has side "left"/);
  });

  it('maps two picked runs to comparison variables', () => {
    const [b1, b2, h1] = parseRuns(runsFrame);
    const want = { 'var-base_build': '1.3', 'var-base_run': 'r1', 'var-head_build': '1.4', 'var-head_run': 'r1' };
    expect(comparisonVars(h1, b1)).toEqual(want);
    expect(comparisonVars(b1, h1)).toEqual(want);
    expect(comparisonVars(b2, b1)).toEqual({
      'var-base_build': '1.3',
      'var-base_run': 'r2',
      'var-head_build': '1.3',
      'var-head_run': 'r1',
    });
  });

  it('parses the summary frame', () => {
    const s = parseSummary(
      createDataFrame({
        fields: [
          { name: 'side', values: ['base', 'head'] },
          { name: 'mean', values: [11, 15] },
          { name: 'median', values: [11, 15] },
          { name: 'stddev', values: [1.4, null] },
          { name: 'change', values: [0.36, 0.36] },
          { name: 'ciLow', values: [0.1, 0.1] },
          { name: 'ciHigh', values: [0.6, 0.6] },
          { name: 'pValue', values: [0.04, 0.04] },
          { name: 'significant', values: [true, true] },
          { name: 'mdc', values: [0.16, 0.16] },
          { name: 'runsToDecide', values: [2400, 2400] },
        ],
      })
    );
    expect(s).toEqual({
      sides: { base: { mean: 11, median: 11, stddev: 1.4 }, head: { mean: 15, median: 15, stddev: NaN } },
      change: 0.36,
      ciLow: 0.1,
      ciHigh: 0.6,
      pValue: 0.04,
      significant: true,
      mdc: 0.16,
      runsToDecide: 2400,
    });
  });
});
