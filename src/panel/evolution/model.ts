import { DataFrame, Field } from '@grafana/data';

import { fieldsOf, frameContracts } from '../model/contract';

/** Frame names of the evolution query (pkg/frames/evolution.go). */
export const FRAME_MATRIX = 'evolution';
export const FRAME_EDGES = 'evolution_edges';
export const FRAME_TIMELINE = 'evolution_timeline';
/** The change points an evolution answer carries (pkg/frames/changepoints.go). */
export const FRAME_CHANGE_POINTS = 'changepoints';

/** Kind is a level of the component hierarchy, outermost first. */
export type Kind = 'package' | 'class' | 'method';

/** A build: a column of the matrix. */
export interface Build {
  name: string;
  /** Build time in ms since the epoch. */
  time: number;
}

/** A component in one build: a cell of the matrix. */
export interface Cell {
  time: number;
  share: number;
  /** Change of time against the previous build; null when there is nothing to compare with. */
  change: number | null;
  modified: number;
  added: number;
  /** The names of the modified and added methods (empty when the frame has none). */
  modifiedMethods: string[];
  addedMethods: string[];
  /**
   * Significant change points of the component's methods that start at this
   * build (the component's own for a method; its methods' for a class or
   * package), largest |change| first. Empty for none.
   */
  changePoints: ChangePoint[];
  /**
   * The test of change across runs (Welch's t, Benjamini-Hochberg over the
   * matrix's cells): null where untested or the frame has no such field.
   */
  pValue: number | null;
  qValue: number | null;
  significant: boolean | null;
}

/** A significant change in a function's per-run values, starting at a build. */
export interface ChangePoint {
  function: string;
  /** Per-run means of the segments before and after the change. */
  before: number;
  after: number;
  /** after / before - 1; null when before is 0 (the function appears). */
  change: number | null;
  pValue: number;
}

/** rise is a change point's direction as a signed size: +Infinity for a function that appears. */
export function rise(cp: ChangePoint): number {
  return cp.change ?? (cp.after > cp.before ? Infinity : -Infinity);
}

/** A row of the matrix: a package, class or method. */
export interface Component {
  /** Unique key: kind and name (a package and a function may share a name). */
  key: string;
  name: string;
  kind: Kind;
  depth: number;
  parent?: Component;
  children: Component[];
  /** Cells by build index; undefined where the component is absent. */
  cells: Array<Cell | undefined>;
  /** Largest share over the builds: the sort key. */
  peakShare: number;
  /** Largest time over the builds. */
  maxTime: number;
}

/** A call edge that a build added or removed against the previous build. */
export interface Edge {
  build: string;
  caller: string;
  callee: string;
  status: 'added' | 'removed';
}

/** A component's share of one time bucket of a build's runs. */
export interface TimelinePoint {
  build: string;
  bucket: number;
  /** Component key (see Component.key). */
  key: string;
  share: number;
}

/** Everything the evolution view shows, parsed from the three frames. */
export interface EvolutionData {
  builds: Build[];
  /** Top-level components, sorted by peak share (largest first), recursively. */
  roots: Component[];
  byKey: Map<string, Component>;
  /** Unit of the time values (the time field's config.unit). */
  unit?: string;
  edges: Edge[];
  timeline: TimelinePoint[];
  /** Whether any cell's change was tested across runs (the frame's significant field). */
  hasStats: boolean;
}

const kinds: Kind[] = ['package', 'class', 'method'];

/** componentKey identifies a component by kind and name. */
export function componentKey(kind: string, name: string): string {
  return `${kind}:${name}`;
}

const {
  evolution,
  evolution_edges: edgesContract,
  evolution_timeline: timelineContract,
  changepoints,
} = frameContracts;

/** column reads a field's values as an array; [] for an optional field the frame lacks. */
function column<T>(f: Field | undefined): T[] {
  return f ? Array.from(f.values as ArrayLike<T>) : [];
}

/** The fields that tell the matrix frame from the others. */
const matrixMarks: Array<keyof typeof evolution.required> = ['component', 'kind', 'build'];

/** isMatrixFrame: the "evolution" frame with its component, kind and build fields. */
export function isMatrixFrame(frame: DataFrame): boolean {
  return frame.name === FRAME_MATRIX && matrixMarks.every((n) => frame.fields.some((f) => f.name === n));
}

/** lines splits a one-name-per-line field value. */
function lines(v: string | undefined): string[] {
  return v ? v.split('\n').filter((l) => l !== '') : [];
}

function toMillis(v: unknown): number {
  const t = typeof v === 'number' ? v : new Date(v as string).getTime();
  return Number.isFinite(t) ? t : 0;
}

/**
 * parseEvolution reads the evolution frames. Builds are sorted by build time
 * (then by first appearance); the hierarchy comes from the parent field: a
 * method's parent is a class or a package, a class's a package. Siblings are
 * sorted by peak share, largest first, then by name. Missing edge and
 * timeline frames give empty lists; a malformed matrix frame throws.
 */
export function parseEvolution(series: DataFrame[]): EvolutionData {
  const matrix = series.find(isMatrixFrame);
  if (!matrix) {
    throw new Error(`no "${FRAME_MATRIX}" frame with component, kind and build fields`);
  }
  const m = fieldsOf(matrix, evolution.required, evolution.optional);
  const names = column<string>(m.component);
  const kindCol = column<string>(m.kind);
  const parents = column<string>(m.parent);
  const buildCol = column<string>(m.build);
  const buildTimes = column<unknown>(m.buildTime);
  const times = column<number>(m.time);
  const shares = column<number>(m.share);
  const changes = column<number | null | undefined>(m.change);
  const modified = column<number>(m.modified);
  const added = column<number>(m.added);
  const modifiedMethods = column<string>(m.modifiedMethods);
  const addedMethods = column<string>(m.addedMethods);
  const pValues = column<number | null>(m.pValue);
  const qValues = column<number | null>(m.qValue);
  const significant = column<boolean | null>(m.significant);
  const orNull = (v: number | null | undefined) => (typeof v === 'number' && Number.isFinite(v) ? v : null);

  const buildIndex = new Map<string, Build>();
  buildCol.forEach((b, i) => {
    if (!buildIndex.has(b)) {
      buildIndex.set(b, { name: b, time: toMillis(buildTimes[i]) });
    }
  });
  const builds = [...buildIndex.values()].sort((a, b) => a.time - b.time);
  const column0 = new Map(builds.map((b, i) => [b.name, i]));

  const byKey = new Map<string, Component>();
  const parentName = new Map<Component, string>();
  for (let i = 0; i < names.length; i++) {
    const kind = kindCol[i] as Kind;
    if (!kinds.includes(kind)) {
      throw new Error(`component "${names[i]}" has unknown kind "${kindCol[i]}"`);
    }
    const key = componentKey(kind, names[i]);
    let c = byKey.get(key);
    if (!c) {
      c = {
        key,
        name: names[i],
        kind,
        depth: 0,
        children: [],
        cells: new Array(builds.length),
        peakShare: 0,
        maxTime: 0,
      };
      byKey.set(key, c);
      parentName.set(c, parents[i] ?? '');
    }
    const change = changes[i];
    c.cells[column0.get(buildCol[i])!] = {
      time: times[i],
      share: shares[i],
      change: orNull(change),
      modified: modified[i] ?? 0,
      added: added[i] ?? 0,
      modifiedMethods: lines(modifiedMethods[i]),
      addedMethods: lines(addedMethods[i]),
      changePoints: [],
      pValue: orNull(pValues[i]),
      qValue: orNull(qValues[i]),
      significant: typeof significant[i] === 'boolean' ? significant[i] : null,
    };
    c.peakShare = Math.max(c.peakShare, shares[i]);
    c.maxTime = Math.max(c.maxTime, times[i]);
  }

  const roots: Component[] = [];
  for (const c of byKey.values()) {
    const p = parentOf(c, parentName.get(c)!, byKey);
    if (p) {
      c.parent = p;
      p.children.push(c);
    } else {
      roots.push(c);
    }
  }
  sortTree(roots, 0);
  markChangePoints(series, byKey, column0);
  return {
    builds,
    roots,
    byKey,
    unit: m.time.config?.unit,
    edges: parseEdges(series),
    timeline: parseTimeline(series),
    hasStats: significant.some((v) => typeof v === 'boolean'),
  };
}

// A method's parent is its class, or its package when it has none; a class's is its package.
function parentOf(c: Component, name: string, byKey: Map<string, Component>): Component | undefined {
  if (!name) {
    return undefined;
  }
  const candidates: Kind[] = c.kind === 'method' ? ['class', 'package'] : c.kind === 'class' ? ['package'] : [];
  for (const k of candidates) {
    const p = byKey.get(componentKey(k, name));
    if (p) {
      return p;
    }
  }
  return undefined;
}

function sortTree(list: Component[], depth: number) {
  list.sort((a, b) => b.peakShare - a.peakShare || a.name.localeCompare(b.name));
  for (const c of list) {
    c.depth = depth;
    sortTree(c.children, depth + 1);
  }
}

/**
 * markChangePoints puts each significant change point of the "changepoints"
 * frame on the cell of its build in its method's row and every ancestor's.
 * Functions without a row (under the matrix threshold, or the total) and
 * insignificant rows (under minChange) mark nothing.
 */
function markChangePoints(series: DataFrame[], byKey: Map<string, Component>, buildColumn: Map<string, number>) {
  const f = series.find((x) => x.name === FRAME_CHANGE_POINTS);
  if (!f) {
    return;
  }
  const c = fieldsOf(f, changepoints.required, changepoints.optional);
  const fn = column<string>(c.function);
  const build = column<string>(c.build);
  const before = column<number>(c.before);
  const after = column<number>(c.after);
  const change = column<number | null>(c.change);
  const p = column<number>(c.pValue);
  const significant = column<boolean>(c.significant);
  const marked = new Set<Cell>();
  fn.forEach((name, i) => {
    const col = buildColumn.get(build[i]);
    if (!significant[i] || col === undefined) {
      return;
    }
    const c = change[i];
    const cp: ChangePoint = {
      function: name,
      before: before[i],
      after: after[i],
      change: typeof c === 'number' && Number.isFinite(c) ? c : null,
      pValue: p[i],
    };
    for (let comp = byKey.get(componentKey('method', name)); comp; comp = comp.parent) {
      const cell = comp.cells[col];
      if (cell) {
        cell.changePoints.push(cp);
        marked.add(cell);
      }
    }
  });
  for (const cell of marked) {
    cell.changePoints.sort((a, b) => Math.abs(rise(b)) - Math.abs(rise(a)) || a.function.localeCompare(b.function));
  }
}

function parseEdges(series: DataFrame[]): Edge[] {
  const f = series.find((x) => x.name === FRAME_EDGES);
  if (!f) {
    return [];
  }
  const e = fieldsOf(f, edgesContract.required, edgesContract.optional);
  const build = column<string>(e.build);
  const caller = column<string>(e.caller);
  const callee = column<string>(e.callee);
  const status = column<string>(e.status);
  return build.map((b, i) => {
    if (status[i] !== 'added' && status[i] !== 'removed') {
      throw new Error(`edge ${caller[i]} → ${callee[i]} has unknown status "${status[i]}"`);
    }
    return { build: b, caller: caller[i], callee: callee[i], status: status[i] as Edge['status'] };
  });
}

function parseTimeline(series: DataFrame[]): TimelinePoint[] {
  const f = series.find((x) => x.name === FRAME_TIMELINE);
  if (!f) {
    return [];
  }
  const t = fieldsOf(f, timelineContract.required, timelineContract.optional);
  const build = column<string>(t.build);
  const bucket = column<number>(t.bucket);
  const component = column<string>(t.component);
  const kind = column<string>(t.kind);
  const share = column<number>(t.share);
  return build.map((b, i) => ({
    build: b,
    bucket: bucket[i],
    key: componentKey(kind[i], component[i]),
    share: share[i],
  }));
}

/**
 * visibleRows lists the rows to draw, depth first: a component's children
 * follow it when its key is in expanded.
 */
export function visibleRows(roots: Component[], expanded: ReadonlySet<string>): Component[] {
  const out: Component[] = [];
  const walk = (list: Component[]) => {
    for (const c of list) {
      out.push(c);
      if (c.children.length > 0 && expanded.has(c.key)) {
        walk(c.children);
      }
    }
  };
  walk(roots);
  return out;
}

/** toggle returns expanded with key added or removed. */
export function toggle(expanded: ReadonlySet<string>, key: string): Set<string> {
  const next = new Set(expanded);
  if (!next.delete(key)) {
    next.add(key);
  }
  return next;
}

/**
 * shortName drops the nearest ancestor's name that prefixes the component's
 * name (and the separator after it), since the indentation already shows it:
 * "checkout/pricing.ApplyDiscounts" under "checkout/pricing" → "ApplyDiscounts".
 */
export function shortName(c: Component): string {
  for (let p = c.parent; p; p = p.parent) {
    if (c.name.length > p.name.length && c.name.startsWith(p.name)) {
      return c.name.slice(p.name.length).replace(/^[.:/$#]+/, '') || c.name;
    }
  }
  return c.name;
}

/**
 * isWithin: component c is, or is inside, ancestor a (a method inside its
 * class and package).
 */
export function isWithin(c: Component | undefined, a: Component): boolean {
  for (let p = c; p; p = p.parent) {
    if (p === a) {
      return true;
    }
  }
  return false;
}

/**
 * edgesOf lists the edges that build added or removed where the caller or
 * the callee is c or one of its methods. Edge ends are method names.
 */
export function edgesOf(data: EvolutionData, c: Component, build: string): Edge[] {
  const inside = (name: string) => isWithin(data.byKey.get(componentKey('method', name)), c);
  return data.edges.filter((e) => e.build === build && (inside(e.caller) || inside(e.callee)));
}

/** A build's timeline: per component key, its share in each time bucket (frames: how many). */
export interface BuildTimeline {
  frames: number;
  shares: Map<string, number[]>;
}

/** timelineOf gathers one build's timeline rows by component. */
export function timelineOf(data: EvolutionData, build: string): BuildTimeline {
  const rows = data.timeline.filter((t) => t.build === build);
  const frames = rows.reduce((m, t) => Math.max(m, t.bucket + 1), 0);
  const shares = new Map<string, number[]>();
  for (const t of rows) {
    let s = shares.get(t.key);
    if (!s) {
      s = new Array(frames).fill(0);
      shares.set(t.key, s);
    }
    s[t.bucket] = t.share;
  }
  return { frames, shares };
}
