import { DataFrame, FieldType, toDataFrame } from '@grafana/data';

import { isEvolutionData } from './index';
import {
  componentKey,
  edgesOf,
  isMatrixFrame,
  parseEvolution,
  rise,
  shortName,
  timelineOf,
  toggle,
  visibleRows,
} from './model';

type MatrixRow = [
  component: string,
  kind: string,
  parent: string,
  build: string,
  time: number,
  share: number,
  change: number | null,
  modified: number,
];

const buildTimes: Record<string, number> = { b1: 1000, b2: 2000, b3: 3000 };

// matrix builds an "evolution" frame like pkg/frames' matrixFrame.
function matrix(rows: MatrixRow[]): DataFrame {
  const col = (k: number) => rows.map((r) => r[k]);
  return toDataFrame({
    name: 'evolution',
    fields: [
      { name: 'component', type: FieldType.string, values: col(0) },
      { name: 'kind', type: FieldType.string, values: col(1) },
      { name: 'parent', type: FieldType.string, values: col(2) },
      { name: 'build', type: FieldType.string, values: col(3) },
      { name: 'buildTime', type: FieldType.time, values: rows.map((r) => buildTimes[r[3]]) },
      { name: 'time', type: FieldType.number, values: col(4), config: { unit: 'ns' } },
      { name: 'share', type: FieldType.number, values: col(5) },
      { name: 'change', type: FieldType.number, values: col(6) },
      { name: 'modified', type: FieldType.number, values: col(7) },
      { name: 'added', type: FieldType.number, values: rows.map(() => 0) },
    ],
  });
}

const edges = toDataFrame({
  name: 'evolution_edges',
  fields: [
    { name: 'build', type: FieldType.string, values: ['b2', 'b2', 'b3', 'b2'] },
    { name: 'caller', type: FieldType.string, values: ['app.main', 'p.(*T).M', 'app.main', 'x.Y'] },
    { name: 'callee', type: FieldType.string, values: ['p.F', 'x.Y', 'p.F', 'x.Z'] },
    { name: 'status', type: FieldType.string, values: ['added', 'removed', 'removed', 'added'] },
  ],
});

const timeline = toDataFrame({
  name: 'evolution_timeline',
  fields: [
    { name: 'build', type: FieldType.string, values: ['b1', 'b1', 'b1', 'b2'] },
    { name: 'bucket', type: FieldType.number, values: [0, 2, 1, 0] },
    { name: 'component', type: FieldType.string, values: ['p', 'p', 'p.F', 'p'] },
    { name: 'kind', type: FieldType.string, values: ['package', 'package', 'method', 'package'] },
    { name: 'share', type: FieldType.number, values: [0.5, 0.25, 0.4, 0.9] },
  ],
});

// Rows arrive out of time order (b2 before b1) and with the small package first,
// so the parser's own build and share ordering is what the tests see.
const rows: MatrixRow[] = [
  ['small', 'package', '', 'b2', 5, 0.05, null, 0],
  ['p', 'package', '', 'b2', 80, 0.8, 0.6, 2],
  ['p', 'package', '', 'b1', 50, 0.5, null, 0],
  ['p.T', 'class', 'p', 'b2', 30, 0.3, null, 1],
  ['p.(*T).M', 'method', 'p.T', 'b2', 30, 0.3, null, 1],
  ['p.F', 'method', 'p', 'b1', 50, 0.5, null, 0],
  ['p.F', 'method', 'p', 'b2', 80, 0.8, 0.6, 1],
  ['p', 'method', 'small', 'b1', 1, 0.01, null, 0],
];

describe('parseEvolution', () => {
  const data = parseEvolution([matrix(rows), edges, timeline]);

  it('orders builds by build time', () => {
    expect(data.builds.map((b) => b.name)).toEqual(['b1', 'b2']);
  });

  it('builds the hierarchy from parent names and sorts siblings by peak share', () => {
    expect(data.roots.map((c) => c.name)).toEqual(['p', 'small']);
    const p = data.roots[0];
    expect(p.children.map((c) => `${c.kind}:${c.name}`)).toEqual(['method:p.F', 'class:p.T']);
    expect(p.children[1].children.map((c) => c.name)).toEqual(['p.(*T).M']);
    expect(p.children[1].children[0].depth).toBe(2);
  });

  it('keeps a method and a package of the same name apart', () => {
    const method = data.byKey.get(componentKey('method', 'p'))!;
    expect(method.parent?.name).toBe('small');
    expect(data.byKey.get(componentKey('package', 'p'))!.children).not.toContain(method);
  });

  it('places cells by build and leaves absent builds empty', () => {
    const t = data.byKey.get(componentKey('class', 'p.T'))!;
    expect(t.cells[0]).toBeUndefined();
    expect(t.cells[1]).toMatchObject({ time: 30, modified: 1, change: null });
    const f = data.byKey.get(componentKey('method', 'p.F'))!;
    expect(f.cells.map((c) => c?.change)).toEqual([null, 0.6]);
    expect(f.maxTime).toBe(80);
    expect(data.unit).toBe('ns');
    expect(t.cells[1]).toMatchObject({ modifiedMethods: [], addedMethods: [] });
  });

  it('reads the names of changed methods, one per line', () => {
    const frame = matrix([['p.F', 'method', 'p', 'b1', 10, 0.5, null, 2]]);
    frame.fields.push(
      { name: 'modifiedMethods', type: FieldType.string, values: ['p.F\np.G'], config: {} },
      { name: 'addedMethods', type: FieldType.string, values: [''], config: {} }
    );
    const cell = parseEvolution([frame]).byKey.get(componentKey('method', 'p.F'))!.cells[0]!;
    expect(cell.modifiedMethods).toEqual(['p.F', 'p.G']);
    expect(cell.addedMethods).toEqual([]);
  });

  it('reads edges and timelines', () => {
    const tl = timelineOf(data, 'b1');
    expect(tl.frames).toBe(3);
    expect(tl.shares.get(componentKey('package', 'p'))).toEqual([0.5, 0, 0.25]);
    expect(tl.shares.get(componentKey('method', 'p.F'))).toEqual([0, 0.4, 0]);
    expect(timelineOf(data, 'b3').frames).toBe(0);
  });

  it('selects the edges of a component and its methods in one build', () => {
    const p = data.byKey.get(componentKey('package', 'p'))!;
    expect(edgesOf(data, p, 'b2').map((e) => `${e.caller}>${e.callee}`)).toEqual(['app.main>p.F', 'p.(*T).M>x.Y']);
    const f = data.byKey.get(componentKey('method', 'p.F'))!;
    expect(edgesOf(data, f, 'b2').map((e) => e.status)).toEqual(['added']);
    expect(edgesOf(data, f, 'b3').map((e) => e.status)).toEqual(['removed']);
  });

  it('is recognised by isEvolutionData only with the matrix frame', () => {
    expect(isEvolutionData([edges, matrix(rows)])).toBe(true);
    expect(isEvolutionData([edges, timeline])).toBe(false);
    expect(isEvolutionData([toDataFrame({ name: 'evolution', fields: [{ name: 'component', values: ['a'] }] })])).toBe(
      false
    );
  });

  it('rejects frames it cannot read', () => {
    expect(() => parseEvolution([])).toThrow(/no "evolution" frame/);
    expect(() => parseEvolution([matrix([['x', 'module', '', 'b1', 1, 1, null, 0]])])).toThrow(/unknown kind "module"/);
    const noTime = toDataFrame({
      name: 'evolution',
      fields: ['component', 'kind', 'build'].map((name) => ({ name, values: ['a'] })),
    });
    expect(isMatrixFrame(noTime)).toBe(true);
    expect(() => parseEvolution([noTime])).toThrow(/missing parent,/);
    const badEdge = toDataFrame({
      name: 'evolution_edges',
      fields: ['build', 'caller', 'callee', 'status'].map((name) => ({ name, values: ['x'] })),
    });
    expect(() => parseEvolution([matrix(rows), badEdge])).toThrow(/unknown status "x"/);
  });
});

describe('visibleRows', () => {
  const data = parseEvolution([matrix(rows)]);
  const names = (open: ReadonlySet<string>) => visibleRows(data.roots, open).map((c) => c.name);

  it('shows the top level when nothing is expanded, children depth first when expanded', () => {
    expect(names(new Set())).toEqual(['p', 'small']);
    const open = toggle(new Set(), componentKey('package', 'p'));
    expect(names(open)).toEqual(['p', 'p.F', 'p.T', 'small']);
    expect(names(toggle(open, componentKey('class', 'p.T')))).toEqual(['p', 'p.F', 'p.T', 'p.(*T).M', 'small']);
    expect(names(toggle(open, componentKey('package', 'p')))).toEqual(['p', 'small']);
  });

  it('shortens names by their ancestors', () => {
    const m = data.byKey.get(componentKey('method', 'p.(*T).M'))!;
    expect(shortName(m)).toBe('(*T).M');
    expect(shortName(data.byKey.get(componentKey('method', 'p.F'))!)).toBe('F');
    expect(shortName(data.roots[0])).toBe('p');
  });
});

describe('change points', () => {
  // pkg/frames' changepoints frame: p.(*T).M rises 60% at b2 (significant),
  // p.F rises 1% (under minChange), the total and an unknown function too.
  const changepoints = toDataFrame({
    name: 'changepoints',
    fields: [
      { name: 'function', type: FieldType.string, values: ['p.(*T).M', 'p.F', 'total', 'gone.F', 'p.F'] },
      { name: 'build', type: FieldType.string, values: ['b2', 'b2', 'b2', 'b2', 'b1'] },
      { name: 'previous', type: FieldType.string, values: ['b1', 'b1', 'b1', 'b1', 'b0'] },
      { name: 'commit', type: FieldType.string, values: ['', '', '', '', ''] },
      { name: 'before', type: FieldType.number, values: [10, 50, 60, 1, 0] },
      { name: 'after', type: FieldType.number, values: [16, 50.5, 96, 2, 50] },
      { name: 'change', type: FieldType.number, values: [0.6, 0.01, 0.6, 1, null] },
      { name: 'pValue', type: FieldType.number, values: [1e-6, 0.01, 1e-5, 0.001, 1e-9] },
      { name: 'significant', type: FieldType.boolean, values: [true, false, true, true, true] },
    ],
  });
  const data = parseEvolution([matrix(rows), changepoints]);
  const marks = (kind: string, name: string) =>
    data.byKey.get(componentKey(kind, name))!.cells.map((c) => c?.changePoints.map((p) => p.function));

  it('marks the method and its ancestors at the build where the change starts', () => {
    expect(marks('method', 'p.(*T).M')).toEqual([undefined, ['p.(*T).M']]);
    expect(marks('class', 'p.T')).toEqual([undefined, ['p.(*T).M']]);
    expect(marks('package', 'p')).toEqual([['p.F'], ['p.(*T).M']]);
    const cp = data.byKey.get(componentKey('method', 'p.(*T).M'))!.cells[1]!.changePoints[0];
    expect(cp).toEqual({ function: 'p.(*T).M', before: 10, after: 16, change: 0.6, pValue: 1e-6 });
  });

  it('leaves insignificant changes and functions without a row unmarked', () => {
    expect(marks('method', 'p.F')).toEqual([['p.F'], []]);
    expect(marks('package', 'small')).toEqual([undefined, []]);
  });

  it('reads a function that appears (no change from 0) as the largest rise', () => {
    const p = data.byKey.get(componentKey('package', 'p'))!;
    expect(p.cells[0]!.changePoints).toEqual([{ function: 'p.F', before: 0, after: 50, change: null, pValue: 1e-9 }]);
    expect(rise(p.cells[0]!.changePoints[0])).toBe(Infinity);
  });
});

describe('the test of change across runs', () => {
  it('reads pValue, qValue and significant, null where untested, and says whether any cell was tested', () => {
    const m = matrix([
      ['p.F', 'method', 'p', 'b1', 100, 0.5, null, 0],
      ['p.F', 'method', 'p', 'b2', 130, 0.6, 0.3, 0],
    ]);
    const old = parseEvolution([m]);
    expect(old.hasStats).toBe(false);
    expect(old.byKey.get(componentKey('method', 'p.F'))!.cells[1]!.significant).toBeNull();

    m.fields.push(
      { name: 'pValue', type: FieldType.number, values: [null, 1e-20], config: {} },
      { name: 'qValue', type: FieldType.number, values: [null, 2e-20], config: {} },
      { name: 'significant', type: FieldType.boolean, values: [null, true], config: {} }
    );
    const data = parseEvolution([m]);
    const [first, second] = data.byKey.get(componentKey('method', 'p.F'))!.cells;
    expect(data.hasStats).toBe(true);
    expect(first).toMatchObject({ pValue: null, qValue: null, significant: null });
    expect(second).toMatchObject({ pValue: 1e-20, qValue: 2e-20, significant: true });
  });
});
