import { FieldType, createDataFrame } from '@grafana/data';

import { diffRows, flameFrame, recursiveRows } from '../../testing/frames';
import { isFlameFrame, runValues, sideOf, toFlameData } from './flameData';

describe('toFlameData', () => {
  it.each([
    ['string labels', false],
    ['enum labels', true],
  ])('reads a diff frame with %s', (_, enumLabels) => {
    const d = toFlameData(flameFrame(diffRows, { enumLabels }));
    expect(d.n).toBe(7);
    expect(Array.from(d.labelIdx, (k) => d.labels[k])).toEqual(['total', 'main', 'a', 'b', 'c', 'd', 'gc']);
    expect(d.maxLevel).toBe(2);
    expect(Array.from(d.end)).toEqual([7, 6, 3, 4, 5, 6, 7]);
    expect(d.base.rootTotal).toBe(100);
    expect(d.head!.rootTotal).toBe(120);
    // Siblings follow each other inside their parent, per side.
    expect(Array.from({ length: d.n }, (_, i) => d.base.startOf(i))).toEqual([0, 0, 0, 60, 90, 90, 100]);
    expect(Array.from({ length: d.n }, (_, i) => d.head!.startOf(i))).toEqual([0, 0, 0, 60, 90, 110, 110]);
    expect(d.unit).toBe('ns');
  });

  it('reads the statistics (nulls as NaN/-1), the package field, meta.custom and the notices', () => {
    const d = toFlameData(
      flameFrame(diffRows, {
        extra: [
          { name: 'significant', type: FieldType.boolean, values: [null, true, false, false, true, true, false] },
          { name: 'qValue', type: FieldType.number, values: [null, 0.01, 0.5, 0.5, 0.02, 0.01, 0.4] },
          { name: 'headRuns', type: FieldType.string, values: ['[1,2.5]', null, 'bad', '', '[]', '[3]', '[4]'] },
          {
            name: 'package',
            type: FieldType.enum,
            values: [0, 1, 1, 1, 1, 1, 0],
            config: { type: { enum: { text: ['', 'app'] } } },
          },
        ],
        custom: { normalize: 'relative', alpha: 0.01, headRuns: 2, baseRuns: 3 },
        notices: ['a notice'],
      })
    );
    expect(Array.from(d.stats!.significant)).toEqual([-1, 1, 0, 0, 1, 1, 0]);
    expect(d.stats!.qValue[0]).toBeNaN();
    expect(d.stats!.pValue[1]).toBeNaN(); // absent field
    expect([0, 1, 2].map((i) => runValues(d.stats!.headRuns[i]))).toEqual([[1, 2.5], [], []]);
    expect(Array.from(d.packages!.idx, (k) => d.packages!.names[k])).toEqual([
      '',
      'app',
      'app',
      'app',
      'app',
      'app',
      '',
    ]);
    expect(d.info).toEqual({ normalize: 'relative', alpha: 0.01, headRuns: 2, baseRuns: 3, notices: ['a notice'] });
    expect(toFlameData(flameFrame(diffRows)).stats).toBeUndefined();
  });

  it('computes delta from the two sides when the frame has none (e.g. Pyroscope)', () => {
    const d = toFlameData(flameFrame(diffRows));
    expect(Array.from(d.delta)).toEqual([0.2, 0.1, 0, 0, 0.2, -0.1, 0.1]);
  });

  it('prefers the delta field when present', () => {
    const frame = flameFrame(diffRows, { delta: true });
    frame.fields.find((f) => f.name === 'delta')!.values[2] = 0.5;
    expect(toFlameData(frame).delta[2]).toBe(0.5);
  });

  it('reads a single graph with one side and zero deltas', () => {
    const d = toFlameData(flameFrame(recursiveRows));
    expect(d.head).toBeUndefined();
    expect(sideOf(d, 'head')).toBe(d.base);
    expect(Array.from(d.delta)).toEqual([0, 0, 0, 0, 0]);
    expect(Array.from(d.end)).toEqual([5, 5, 5, 5, 5]);
  });

  const frameWith = (fields: Array<{ name: string; type: FieldType; values: unknown[]; config?: object }>) =>
    createDataFrame({ fields });
  it.each([
    [
      'a missing field',
      frameWith([{ name: 'level', type: FieldType.number, values: [0] }]),
      /missing label, value, self/,
    ],
    [
      'a level jump',
      frameWith([
        { name: 'level', type: FieldType.number, values: [0, 2] },
        { name: 'label', type: FieldType.string, values: ['a', 'b'] },
        { name: 'value', type: FieldType.number, values: [1, 1] },
        { name: 'self', type: FieldType.number, values: [0, 1] },
      ]),
      /row 1 has level 2 after level 0/,
    ],
    [
      'a non-number value',
      frameWith([
        { name: 'level', type: FieldType.number, values: [0] },
        { name: 'label', type: FieldType.string, values: ['a'] },
        { name: 'value', type: FieldType.number, values: ['x'] },
        { name: 'self', type: FieldType.number, values: [0] },
      ]),
      /field value: row 0 is not a finite number/,
    ],
    [
      'an enum index out of range',
      frameWith([
        { name: 'level', type: FieldType.number, values: [0] },
        { name: 'label', type: FieldType.enum, values: [3], config: { type: { enum: { text: ['a'] } } } },
        { name: 'value', type: FieldType.number, values: [1] },
        { name: 'self', type: FieldType.number, values: [1] },
      ]),
      /enum index 3 outside its 1 texts/,
    ],
    [
      'valueRight without selfRight',
      frameWith([
        { name: 'level', type: FieldType.number, values: [0] },
        { name: 'label', type: FieldType.string, values: ['a'] },
        { name: 'value', type: FieldType.number, values: [1] },
        { name: 'self', type: FieldType.number, values: [1] },
        { name: 'valueRight', type: FieldType.number, values: [1] },
      ]),
      /needs both valueRight and selfRight/,
    ],
  ])('rejects %s with a clear error', (_, frame, message) => {
    expect(() => toFlameData(frame)).toThrow(message);
  });

  it('recognises flame graph frames by their fields', () => {
    expect(isFlameFrame(flameFrame(diffRows))).toBe(true);
    expect(isFlameFrame(createDataFrame({ fields: [{ name: 'level', values: [0] }] }))).toBe(false);
  });
});
