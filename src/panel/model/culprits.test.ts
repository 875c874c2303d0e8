import { DataFrame, FieldType, createDataFrame } from '@grafana/data';

import { diffRows, flameFrame } from '../../testing/frames';
import {
  culpritSites,
  culpritsFrameOf,
  isCulpritsFrame,
  parseCulprits,
  plainText,
  samePath,
  segments,
  source,
  verdictOf,
} from './culprits';
import { toFlameData } from './flameData';
import { nodeAtPath, pathMatch } from './focus';
import { parseFunctions, selfDelta, sortRows, totalsOf, withSelfDeltas } from './functions';

const verdict = {
  result: 'FAIL',
  headline: '`c` is new in head, called from `main`: +20.00% of the base total.',
  why: '1 culprit regressed significantly by at least +1.00% of the base total.',
  normalize: 'absolute',
};

/** A culprits frame as pkg/frames.Culprits writes it (path fields as JSON). */
function culpritsFrame(asStrings = false): DataFrame {
  const path = [['main', 'c'], ['main', 'd'], []];
  const other = [[], [['x', 'd']], []];
  const j = (v: unknown) => (asStrings ? JSON.stringify(v) : v);
  return createDataFrame({
    name: 'culprits',
    fields: [
      { name: 'culprit', type: FieldType.string, values: ['c', 'd', 'total'] },
      { name: 'module', type: FieldType.string, values: ['m', '', ''] },
      { name: 'kind', type: FieldType.string, values: ['new', 'replaced', 'spread'] },
      { name: 'path', type: FieldType.other, values: path.map(j) },
      { name: 'otherSites', type: FieldType.other, values: other.map(j) },
      { name: 'callee', type: FieldType.string, values: ['', '', 'main'] },
      { name: 'delta', type: FieldType.number, values: [0.2, -0.1, 0.05] },
      { name: 'deltaLow', type: FieldType.number, values: [0.1, -0.2, null] },
      { name: 'deltaHigh', type: FieldType.number, values: [0.3, -0.05, null] },
      { name: 'pValue', type: FieldType.number, values: [0.001, 0.01, 0.02] },
      { name: 'qValue', type: FieldType.number, values: [0.002, 0.02, 0.04] },
      { name: 'share', type: FieldType.number, values: [1.2, -0.5, null] },
      { name: 'regression', type: FieldType.boolean, values: [true, false, true] },
      { name: 'file', type: FieldType.string, values: ['c.go', '', ''] },
      { name: 'line', type: FieldType.number, values: [12, 0, 0] },
      { name: 'modified', type: FieldType.boolean, values: [true, false, false] },
      { name: 'replaced', type: FieldType.string, values: ['', 'json.Marshal', ''] },
      { name: 'moved', type: FieldType.boolean, values: [false, true, false] },
    ],
    meta: { custom: { variant: 'normal', verdict } },
  });
}

describe('culprits frames', () => {
  it.each([false, true])('read rows apart by direction, JSON paths parsed or not (strings %s)', (asStrings) => {
    const c = parseCulprits(culpritsFrame(asStrings));
    expect(c.verdict).toEqual(verdict);
    expect(c.regressions.map((r) => [r.function, r.kind, r.path])).toEqual([
      ['c', 'new', ['main', 'c']],
      ['total', 'spread', []],
    ]);
    expect(c.improvements).toHaveLength(1);
    expect(c.improvements[0]).toMatchObject({
      function: 'd',
      kind: 'replaced',
      otherSites: [['x', 'd']],
      share: -0.5,
      modified: false,
      replaced: 'json.Marshal',
      moved: true,
    });
    expect(c.regressions[0]).toMatchObject({ replaced: '', moved: false });
    expect(c.regressions[0]).toMatchObject({ file: 'c.go', line: 12, modified: true, qValue: 0.002 });
    expect(c.regressions[1].deltaLow).toBeNaN();
    expect(c.regressions[1].share).toBeNaN();
    expect(source(c.regressions[0])).toBe('c.go:12');
    expect(source(c.improvements[0])).toBe('');
  });

  it('are found right after the flame frame they belong to, in whichever answer holds it', () => {
    const flame = flameFrame(diffRows);
    const culprits = culpritsFrame();
    const other = flameFrame(diffRows);
    expect(isCulpritsFrame(culprits)).toBe(true);
    expect(isCulpritsFrame(flame)).toBe(false);
    expect(culpritsFrameOf(flame, [[other], undefined, [flame, culprits]])).toBe(culprits);
    // An older backend, or a flamegraph query: no culprits frame after it.
    expect(culpritsFrameOf(other, [[other, flame, culprits]])).toBeUndefined();
    expect(culpritsFrameOf(flame, [[flame]])).toBeUndefined();
    expect(culpritsFrameOf(undefined, [[flame, culprits]])).toBeUndefined();
  });

  it('have no verdict when the backend sent none', () => {
    const f = culpritsFrame();
    f.meta = { custom: { variant: '' } };
    expect(verdictOf(f)).toBeUndefined();
    f.meta = { custom: { verdict: { result: 1 } } };
    expect(verdictOf(f)).toBeUndefined();
    expect(parseCulprits(f).regressions).toHaveLength(2);
  });

  it('carry what the runs can see', () => {
    const f = culpritsFrame();
    const sentence = 'These runs detect a change of the total of 2.00% or more with 80% power at alpha 0.05.';
    f.meta = { custom: { verdict: { ...verdict, power: { mdc: 0.02, sentence } } } };
    expect(verdictOf(f)?.power).toBe(sentence);
  });
});

describe('verdict sentences', () => {
  it('split at backticks into names and text', () => {
    expect(segments(verdict.headline)).toEqual([
      { text: 'c', code: true },
      { text: ' is new in head, called from ', code: false },
      { text: 'main', code: true },
      { text: ': +20.00% of the base total.', code: false },
    ]);
    expect(
      segments(verdict.headline)
        .map((s) => s.text)
        .join('')
    ).toBe(plainText(verdict.headline));
  });

  it('compare call paths by their labels', () => {
    expect(samePath(['a', 'b'], ['a', 'b'])).toBe(true);
    expect(samePath(['a', 'b'], ['a'])).toBe(false);
    expect(samePath(['a'], undefined)).toBe(false);
  });
});

describe('a culprit path in the graph', () => {
  const d = toFlameData(flameFrame(diffRows));
  it('finds the nodes where culprits enter: their paths and other sites, the root for []', () => {
    const sites = culpritSites(d, parseCulprits(culpritsFrame()));
    const at = (path: string[]) => sites.get(nodeAtPath(d, path))?.function;
    expect(at(['main', 'c'])).toBe('c');
    expect(at(['main', 'd'])).toBe('d');
    expect(at([])).toBe('total');
    expect(sites.size).toBe(3); // d's other site, x > d, is not in this tree
    expect(culpritSites(undefined, parseCulprits(culpritsFrame())).size).toBe(0);
    expect(culpritSites(d, undefined).size).toBe(0);
  });

  it('marks the ancestors, the node and its subtree, nothing else', () => {
    const main = nodeAtPath(d, ['main']);
    const c = nodeAtPath(d, ['main', 'c']);
    const marked = (m: Uint8Array) =>
      Array.from(m.keys())
        .filter((i) => m[i] === 1)
        .map((i) => d.labels[d.labelIdx[i]]);
    expect(marked(pathMatch(d, c))).toEqual(['total', 'main', 'c']);
    expect(marked(pathMatch(d, main))).toEqual(['total', 'main', 'a', 'b', 'c', 'd']);
  });
});

describe('self deltas', () => {
  const functions = createDataFrame({
    fields: [
      { name: 'function', type: FieldType.string, values: ['a', 'b', 'c'] },
      { name: 'selfBase', type: FieldType.number, values: [10, 50, 0] },
      { name: 'totalBase', type: FieldType.number, values: [100, 50, 0] },
      { name: 'selfHead', type: FieldType.number, values: [40, 45, 5] },
      { name: 'totalHead', type: FieldType.number, values: [100, 45, 5] },
      { name: 'delta', type: FieldType.number, values: [0, -0.05, 0.05] },
    ],
  });

  it('are shares of the base total (absolute) or changes of each side’s share (relative)', () => {
    expect(selfDelta(10, 40, { base: 100, head: 200, normalize: 'absolute' })).toBeCloseTo(0.3);
    expect(selfDelta(10, 40, { base: 100, head: 200, normalize: 'relative' })).toBeCloseTo(0.1);
    expect(selfDelta(10, 40, { base: 0, head: 200, normalize: 'absolute' })).toBeNaN();
  });

  it('come from the flame frame’s root totals and sort by their size', () => {
    const totals = totalsOf(flameFrame(diffRows), 'absolute');
    expect(totals).toEqual({ base: 100, head: 120, normalize: 'absolute' });
    const rows = withSelfDeltas(parseFunctions(functions), totals).rows;
    expect(rows.map((r) => r.selfDelta)).toEqual([0.3, -0.05, 0.05]);
    // By self delta, a changes most; by total delta it does not change at all.
    expect(sortRows(rows, 'selfDelta').map((r) => r.name)).toEqual(['a', 'b', 'c']);
    expect(sortRows(rows, 'delta').map((r) => r.name)).toEqual(['b', 'c', 'a']);
    expect(parseFunctions(functions).rows[0].selfDelta).toBeNaN();
    expect(withSelfDeltas(parseFunctions(functions), undefined).rows[0].selfDelta).toBeNaN();
    expect(totalsOf(flameFrame([[0, 'total', 10, 10]]), 'absolute')).toBeUndefined();
  });
});

describe('the culprits contract', () => {
  it('names every missing and mistyped field in one error', () => {
    const f = culpritsFrame();
    f.fields = f.fields.filter((x) => x.name !== 'moved' && x.name !== 'callee');
    f.fields.find((x) => x.name === 'line')!.type = FieldType.string;
    f.fields.find((x) => x.name === 'regression')!.type = FieldType.number;
    expect(() => parseCulprits(f)).toThrow(
      'culprits: missing callee, moved; wrong types: regression is number, not boolean; line is string, not number'
    );
  });

  it('reads the p-value beside the q-value', () => {
    expect(parseCulprits(culpritsFrame()).regressions[0]).toMatchObject({ pValue: 0.001, qValue: 0.002 });
  });
});
