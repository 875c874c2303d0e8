import { BuildInfo, applyPreset, openingQuery } from './presets';

const b = (name: string, runs = 10): BuildInfo => ({ name, time: '2026-09-01T09:00:00Z', runs });
const builds = [b('1.0.0'), b('1.1.0'), b('1.2.0', 0), b('1.3.0'), b('1.4.0', 0)];

describe("serve's opening query and presets", () => {
  it('opens on the newest build with runs against the one with runs before it', () => {
    const q = openingQuery('app', builds)!;
    expect(q).toMatchObject({ queryType: 'diff', app: 'app', refId: 'A' });
    expect(q.head).toEqual({ builds: ['1.3.0'], runs: [] });
    expect(q.base).toEqual({ builds: ['1.1.0'], runs: [] });
    expect(q.variants).toBe(true);
  });

  it("shows a lone build's flame graph, and nothing without runs", () => {
    expect(openingQuery('app', [b('1.0.0'), b('2.0.0', 0)])).toMatchObject({
      queryType: 'flamegraph',
      head: { builds: ['1.0.0'] },
      base: { builds: [] },
    });
    expect(openingQuery('app', [b('1.0.0', 0)])).toBeUndefined();
    expect(openingQuery('app', [])).toBeUndefined();
  });

  it('compares the shown head with the previous build, a chosen build, or shows its runs alone', () => {
    const q = { ...openingQuery('app', builds)!, head: { builds: ['1.1.0'], runs: ['r1'] } };
    expect(applyPreset(q, 'previous', builds)!.base.builds).toEqual(['1.0.0']);
    expect(applyPreset(q, 'previous', builds)!.head).toEqual({ builds: ['1.1.0'], runs: ['r1'] });
    expect(applyPreset({ ...q, head: { builds: ['1.0.0'], runs: [] } }, 'previous', builds)).toBeUndefined();
    expect(applyPreset(q, 'against', builds, '1.3.0')!.base).toEqual({ builds: ['1.3.0'], runs: [] });
    expect(applyPreset(q, 'against', builds)).toBeUndefined();
    const only = applyPreset({ ...q, queryType: 'evolution' }, 'headOnly', builds)!;
    expect(only.queryType).toBe('flamegraph');
    expect(only.base.builds).toEqual([]);
  });
});
