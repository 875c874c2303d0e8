import { FieldType } from '@grafana/data';

import { diffRows, flameFrame } from '../testing/frames';
import { verdictOf } from './verdict';

describe('verdictOf', () => {
  it('has nothing to judge in a single flame graph', () => {
    expect(verdictOf(flameFrame([[0, 'total', 10, 10]]))).toBeUndefined();
  });

  it('keeps the notice of a diff without statistics', () => {
    const frame = flameFrame(diffRows, { delta: true });
    frame.meta = { notices: [{ severity: 'info', text: 'needs at least 2 runs on each side; have head 1, base 1' }] };
    expect(verdictOf(frame)).toEqual({
      stats: false,
      notice: 'needs at least 2 runs on each side; have head 1, base 1',
    });
  });

  it('lists significant nodes by side, largest change first, without other nodes', () => {
    const frame = flameFrame([...diffRows, [1, 'other', 0, 0, 5, 5]], { delta: true });
    const n = frame.length;
    const sig = [true, true, false, false, true, true, true, true];
    frame.fields.push(
      { name: 'significant', type: FieldType.boolean, values: sig, config: {} },
      { name: 'qValue', type: FieldType.number, values: Array(n).fill(0.01), config: {} },
      { name: 'deltaLow', type: FieldType.number, values: Array(n).fill(0.05), config: {} },
      { name: 'deltaHigh', type: FieldType.number, values: [0.3, ...Array(n - 1).fill(NaN)], config: {} }
    );
    frame.meta = { custom: { stats: true, alpha: 0.05 } };
    const v = verdictOf(frame);
    expect(v?.stats).toBe(true);
    if (!v?.stats) {
      return;
    }
    expect(v.alpha).toBe(0.05);
    expect(v.total).toEqual({ label: 'total', delta: 0.2, low: 0.05, high: 0.3, q: 0.01, significant: true });
    expect(v.slower.map((c) => c.label)).toEqual(['c', 'main', 'gc']);
    expect(v.slower[0].high).toBeUndefined();
    expect(v.faster.map((c) => c.label)).toEqual(['d']);
  });
});
