import { FieldType } from '@grafana/data';

import { diffRows, flameFrame } from '../../testing/frames';
import { toFlameData } from '../model/flameData';
import { relativeChange, tooltipRows } from './Tooltip';

describe('tooltip', () => {
  it('says in words that a node is on one side only, never +inf%', () => {
    expect(relativeChange(20, 0)).toBe('only in head (new)');
    expect(relativeChange(0, 10)).toBe('only in base (removed)');
    expect(relativeChange(15, 10)).toBe('+50.00%');
  });

  it('lists per-run values, changes, statistics and run counts', () => {
    const nul = (v: number) => (v < 0 ? null : v);
    const d = toFlameData(
      flameFrame(diffRows, {
        extra: [
          { name: 'significant', type: FieldType.boolean, values: [null, true, false, false, true, true, false] },
          { name: 'pValue', type: FieldType.number, values: [-1, 0.001, 0.5, 0.5, 0.01, 0.002, 0.3].map(nul) },
          { name: 'qValue', type: FieldType.number, values: [-1, 0.004, 0.6, 0.6, 0.03, 0.004, 0.4].map(nul) },
          { name: 'deltaLow', type: FieldType.number, values: [0, 0.05, 0, 0, 0.1, -0.12, 0] },
          { name: 'deltaHigh', type: FieldType.number, values: [0, 0.15, 0, 0, 0.3, -0.08, 0] },
          { name: 'headRuns', type: FieldType.string, values: Array(7).fill('[1,2]') },
          { name: 'baseRuns', type: FieldType.string, values: Array(7).fill('[1,2]') },
          { name: 'otherCount', type: FieldType.number, values: [0, 0, 0, 0, 0, 0, 0] },
          { name: 'otherMaxDelta', type: FieldType.number, values: [0, 0, 0, 0, 0, 0, 0] },
        ],
        custom: { normalize: 'absolute', alpha: 0.05, headRuns: 2, baseRuns: 2, stats: true },
      })
    );
    const rows = Object.fromEntries(tooltipRows(d, d.labels.indexOf('main'), 'head'));
    expect(rows).toMatchObject({
      'Head total (per run)': '110.00 ns',
      'Base total (per run)': '100.00 ns',
      Change: '+10.00 ns',
      'Change of the node': '+10.00%',
      'Change, share of base total': '+10.00%',
      '95% CI of the change': '+5.00% … +15.00%',
      'p / q': '0.0010 / 0.0040',
      '': 'significant at α = 0.05',
      Runs: 'head 2, base 2',
    });
    expect(Object.fromEntries(tooltipRows(d, d.labels.indexOf('c'), 'head'))['Change of the node']).toBe(
      'only in head (new)'
    );
  });
});
