import { DataFrame, Field, FieldType } from '@grafana/data';

import { fieldsOf, frameContracts, hasFields } from './contract';

/**
 * One side of a flame graph: the widths, self values and x positions (in value
 * units) of every node. A single graph has one side; a diff has a base and a head.
 */
export interface Side {
  total: ArrayLike<number>;
  self: ArrayLike<number>;
  /**
   * x of node i's left edge, in value units. Nothing is laid out ahead: a
   * drawing places the nodes it walks (layout.ts), and one node's place is
   * the widths of its ancestors' earlier siblings.
   */
  startOf(i: number): number;
  /** Sum of the level-0 totals: the full width of this side. */
  rootTotal: number;
}

/**
 * A flame graph frame as flat typed arrays in depth-first pre-order, built once
 * per frame. Index i is the frame's row i.
 */
export interface FlameData {
  n: number;
  level: Int32Array;
  /** Index of the node's label in labels. */
  labelIdx: Int32Array;
  labels: string[];
  /** Index one past the node's subtree: jumping there skips all descendants. */
  end: Int32Array;
  maxLevel: number;
  /** base is the frame's value/self; for a single graph it is the only side. */
  base: Side;
  /** head is valueRight/selfRight; undefined for a single graph. */
  head?: Side;
  /** (head_total - base_total) / base root total; zeros for a single graph. */
  delta: ArrayLike<number>;
  /** config.unit of the value field (ns, bytes, short, ...). */
  unit?: string;
  /** Per-node significance across runs; undefined without statistics. */
  stats?: NodeStats;
  /** Each node's package (the backend's `package` field); undefined when the frame has none. */
  packages?: { idx: Int32Array; names: string[] };
  info: FrameInfo;
}

/** Per-node statistics of a diff (docs/FRAMES.md), row-parallel to the nodes. */
export interface NodeStats {
  /** 1 significant, 0 not, -1 undefined (no test possible). */
  significant: Int8Array;
  /** NaN where undefined. */
  pValue: Float64Array;
  qValue: Float64Array;
  deltaLow: Float64Array;
  deltaHigh: Float64Array;
  /** JSON arrays of the node's per-run totals, parsed on demand (see runValues). */
  headRuns: ArrayLike<string | null>;
  baseRuns: ArrayLike<string | null>;
  /** Nodes an `other` node merges (0 for other nodes) and the largest |delta| among them, signed. */
  otherCount: ArrayLike<number>;
  otherMaxDelta: ArrayLike<number>;
}

/** What the backend says about the whole frame (meta.custom and meta.notices). */
export interface FrameInfo {
  normalize: Normalization;
  /** Significance level of the q-values; undefined when the frame does not say. */
  alpha?: number;
  headRuns?: number;
  baseRuns?: number;
  /** Why there are no statistics (e.g. too few runs), from the frame's notices. */
  notices: string[];
}

/** How a diff's delta is normalised (query model field `normalize`). */
export type Normalization = 'absolute' | 'relative';

/** Views of a diff: which side's widths are drawn. */
export type SideName = 'head' | 'base';

const flame = frameContracts.flamegraph;

/**
 * isFlameFrame reports whether a frame has Grafana's flame graph fields
 * (level, label, value, self), whoever produced it.
 */
export function isFlameFrame(frame: DataFrame): boolean {
  return hasFields(frame, flame.required);
}

/** isDiffFrame reports whether a flame graph frame has two sides (valueRight: a diff). */
export function isDiffFrame(frame: DataFrame): boolean {
  return isFlameFrame(frame) && hasFields(frame, { valueRight: flame.optional.valueRight });
}

/** The flame graph fields a frame has. */
type FlameFields = ReturnType<typeof flameFieldsOf>;

/** flameFieldsOf reads a flame graph frame's fields through its contract. */
function flameFieldsOf(frame: DataFrame) {
  return fieldsOf(frame, flame.required, flame.optional);
}

/**
 * numbers reads a numeric field whose rows have been checked (rows): the frame's
 * own array when it is exactly the rows (a million-node frame is not copied
 * again: copying costs more than drawing the first frame), else a copy.
 */
function numbers(f: Field, n: number): ArrayLike<number> {
  const v = f.values as ArrayLike<number>;
  if (v.length === n && (Array.isArray(v) || v instanceof Float64Array)) {
    return v;
  }
  return Float64Array.from({ length: n }, (_, i) => v[i]);
}

/** nullable reads a nullable float field: null (and absent rows) become NaN. */
function nullable(f: Field, n: number): Float64Array {
  const out = new Float64Array(n);
  const values = f.values;
  for (let i = 0; i < n; i++) {
    const v = values[i];
    out[i] = v === null || v === undefined ? NaN : Number(v);
  }
  return out;
}

/**
 * statsOf reads the statistics fields of a diff frame; undefined when it has
 * none. Only `significant` colours the first frame: the fields a tooltip
 * shows are decoded on first use (four to six passes over a million rows
 * less before the first paint).
 */
function statsOf(f: FlameFields, n: number): NodeStats | undefined {
  const sig = f.significant;
  if (!sig) {
    return undefined;
  }
  const significant = new Int8Array(n);
  const sv = sig.values;
  for (let i = 0; i < n; i++) {
    const v = sv[i];
    significant[i] = v === null || v === undefined ? -1 : v ? 1 : 0;
  }
  // A bad per-node number reads as missing (NaN): unlike a bad width, it
  // cannot misdraw the graph, and a tooltip is no place to fail.
  const lazy = (field: Field | undefined, missing: number) => {
    let out: Float64Array | undefined;
    return () => (out ??= field ? nullable(field, n) : new Float64Array(n).fill(missing));
  };
  const pValue = lazy(f.pValue, NaN);
  const qValue = lazy(f.qValue, NaN);
  const deltaLow = lazy(f.deltaLow, NaN);
  const deltaHigh = lazy(f.deltaHigh, NaN);
  const otherCount = lazy(f.otherCount, 0);
  const otherMaxDelta = lazy(f.otherMaxDelta, 0);
  return {
    significant,
    get pValue() {
      return pValue();
    },
    get qValue() {
      return qValue();
    },
    get deltaLow() {
      return deltaLow();
    },
    get deltaHigh() {
      return deltaHigh();
    },
    headRuns: f.headRuns?.values ?? [],
    baseRuns: f.baseRuns?.values ?? [],
    get otherCount() {
      return otherCount();
    },
    get otherMaxDelta() {
      return otherMaxDelta();
    },
  };
}

/** runValues parses one node's per-run totals (a JSON array); [] when absent or malformed. */
export function runValues(json: string | null | undefined): number[] {
  if (!json) {
    return [];
  }
  try {
    const v: unknown = JSON.parse(json);
    return Array.isArray(v) ? v.map(Number) : [];
  } catch {
    return [];
  }
}

/** infoOf reads meta.custom (normalize, alpha, run counts) and the info notices. */
export function infoOf(frame: DataFrame): FrameInfo {
  const c = frame.meta?.custom ?? {};
  const num = (v: unknown) => (typeof v === 'number' ? v : undefined);
  return {
    normalize: c.normalize === 'relative' ? 'relative' : 'absolute',
    alpha: num(c.alpha),
    headRuns: num(c.headRuns),
    baseRuns: num(c.baseRuns),
    notices: (frame.meta?.notices ?? []).map((x) => x.text),
  };
}

/** enumTexts is an enum field's text table; undefined for a string field. */
function enumTexts(f: Field): string[] | undefined {
  const text = f.config?.type?.enum?.text;
  return f.type === FieldType.enum || text ? (text ?? []) : undefined;
}

/** badEnum is the error of an enum index outside its texts. */
function badEnum(name: string, row: number, v: unknown, texts: number): Error {
  return new Error(`field ${name}: row ${row} has enum index ${v} outside its ${texts} texts`);
}

/** labelsOf interns a label field: enum fields keep their text table. */
function labelsOf(f: Field, n: number, name = 'label'): { labels: string[]; labelIdx: Int32Array } {
  const labelIdx = new Int32Array(n);
  const texts = enumTexts(f);
  if (texts) {
    const values = f.values;
    for (let i = 0; i < n; i++) {
      const v = values[i];
      const idx = typeof v === 'number' ? v : Number(v);
      if (!(idx >= 0 && idx < texts.length && (idx | 0) === idx)) {
        throw badEnum(name, i, v, texts.length);
      }
      labelIdx[i] = idx;
    }
    return { labels: texts, labelIdx };
  }
  const seen = new Map<string, number>();
  const labels: string[] = [];
  for (let i = 0; i < n; i++) {
    const s = String(f.values[i] ?? '');
    let idx = seen.get(s);
    if (idx === undefined) {
      idx = labels.length;
      seen.set(s, idx);
      labels.push(s);
    }
    labelIdx[i] = idx;
  }
  return { labels, labelIdx };
}

/** What one pass over a flame graph frame's rows reads. */
interface Rows {
  level: Int32Array;
  maxLevel: number;
  /** The label indexes of an enum label field; undefined for a string one. */
  labelIdx?: Int32Array;
}

/**
 * rows reads a flame graph frame row by row, in one pass: the levels (a
 * level rises by at most one from one row to the next) and the deepest, the
 * indexes of an enum label field, and that the numeric fields (at most five)
 * are finite numbers. One pass, not one a field: on a panel's first frame
 * every loop starts as cold code, and over a million rows each loop's
 * warm-up costs about as much as its work; at one site each field's reads
 * see one element kind.
 */
function rows(levelField: Field, labelField: Field, numeric: Array<[string, Field]>, n: number): Rows {
  for (const [name, f] of [['level', levelField] as const, ['label', labelField] as const, ...numeric]) {
    if (f.values.length < n) {
      throw new Error(`field ${name}: ${f.values.length} values for ${n} rows`);
    }
  }
  const values = levelField.values as ArrayLike<number>;
  const level = new Int32Array(n);
  const texts = enumTexts(labelField);
  const labels = labelField.values;
  const labelIdx = texts && new Int32Array(n);
  // Fewer than five numeric fields: the last one stands in for the rest.
  const [a, b, c, d, e] = [0, 1, 2, 3, 4].map((k) => numeric[Math.min(k, numeric.length - 1)][1].values);
  let maxLevel = 0;
  let prev = -1;
  for (let i = 0; i < n; i++) {
    const v = values[i];
    const l = v | 0;
    // l === v rejects fractions, NaN, strings and nulls alike.
    if (l !== v || l < 0 || l > prev + 1) {
      throw new Error(`field level: row ${i} has level ${v} after level ${i > 0 ? values[i - 1] : 'none'}`);
    }
    level[i] = l;
    prev = l;
    if (l > maxLevel) {
      maxLevel = l;
    }
    if (labelIdx) {
      const x = labels[i];
      // Indexes are numbers but in odd frames: no conversion call per row.
      const idx = typeof x === 'number' ? x : Number(x);
      if (!(idx >= 0 && idx < texts!.length && (idx | 0) === idx)) {
        throw badEnum('label', i, x, texts!.length);
      }
      labelIdx[i] = idx;
    }
    const finite =
      Number.isFinite(a[i]) &&
      Number.isFinite(b[i]) &&
      Number.isFinite(c[i]) &&
      Number.isFinite(d[i]) &&
      Number.isFinite(e[i]);
    if (!finite) {
      const [name] = numeric.find(([, f]) => !Number.isFinite(f.values[i]))!;
      throw new Error(`field ${name}: row ${i} is not a finite number`);
    }
  }
  return { level, maxLevel, labelIdx };
}

/**
 * subtreeEnds is each node's end (one past its subtree): backwards, a node's
 * size is one plus the sizes of its children, summed per level as they pass.
 * No loop inside the loop: half the time of closing nodes on a stack going
 * forwards, whose pops follow the levels' random descents.
 */
function subtreeEnds(level: Int32Array, maxLevel: number): Int32Array {
  const n = level.length;
  const end = new Int32Array(n);
  const below = new Int32Array(maxLevel + 2);
  for (let i = n - 1; i >= 0; i--) {
    const l = level[i];
    const size = 1 + below[l + 1];
    below[l + 1] = 0;
    below[l] += size;
    end[i] = i + size;
  }
  return end;
}

/**
 * layoutSide is one side's widths. It places no node ahead: the first frame
 * of a million-node tree places only the nodes it walks.
 */
export function layoutSide(
  level: Int32Array,
  end: Int32Array,
  total: ArrayLike<number>,
  self: ArrayLike<number>
): Side {
  const n = level.length;
  let rootTotal = 0;
  for (let i = 0; i < n; i = end[i]) {
    rootTotal += total[i]; // the level-0 nodes, jumping over their subtrees
  }
  return {
    total,
    self,
    startOf(i) {
      // Down from the roots: a subtree that ends before i is an earlier sibling of i or of an ancestor.
      let x = 0;
      for (let j = 0; j < i;) {
        if (end[j] <= i) {
          x += total[j];
          j = end[j];
        } else {
          j++;
        }
      }
      return x;
    },
    rootTotal,
  };
}

/**
 * toFlameData converts a flame graph frame (Flamediff's or any other source's,
 * e.g. Pyroscope's) into FlameData. value/self are the base (left) side and
 * valueRight/selfRight the head (right) side, as in Grafana's flame graph. The
 * delta field is used when present, otherwise computed from the two sides.
 * It throws an Error naming the field for a frame it cannot draw.
 */
export function toFlameData(frame: DataFrame): FlameData {
  const f = flameFieldsOf(frame);
  const n = frame.length ?? f.level.values.length;
  const valueField = f.value;
  const { valueRight, selfRight } = f;
  if (Boolean(valueRight) !== Boolean(selfRight)) {
    throw new Error('a diff frame needs both valueRight and selfRight');
  }
  const deltaField = valueRight && f.delta;
  const numeric: Array<[string, Field | undefined]> = [
    ['value', valueField],
    ['self', f.self],
    ['valueRight', valueRight],
    ['selfRight', selfRight],
    ['delta', deltaField],
  ];
  const read = rows(
    f.level,
    f.label,
    numeric.filter((c): c is [string, Field] => Boolean(c[1])),
    n
  );
  const { level, maxLevel } = read;
  const end = subtreeEnds(level, maxLevel);
  const { labels, labelIdx } = read.labelIdx
    ? { labels: enumTexts(f.label)!, labelIdx: read.labelIdx }
    : labelsOf(f.label, n);
  const base = layoutSide(level, end, numbers(valueField, n), numbers(f.self, n));
  let head: Side | undefined;
  const computed = new Float64Array(deltaField ? 0 : n);
  const delta = deltaField ? numbers(deltaField, n) : computed;
  if (valueRight && selfRight) {
    head = layoutSide(level, end, numbers(valueRight, n), numbers(selfRight, n));
    if (!deltaField) {
      const denom = base.rootTotal;
      for (let i = 0; i < n && denom > 0; i++) {
        computed[i] = (head.total[i] - base.total[i]) / denom;
      }
    }
  }
  const pkg = f.package;
  const packages = pkg ? labelsOf(pkg, n, 'package') : undefined;
  return {
    n,
    level,
    labelIdx,
    labels,
    end,
    maxLevel,
    base,
    head,
    delta,
    unit: valueField.config?.unit,
    stats: head ? statsOf(f, n) : undefined,
    packages: packages && { idx: packages.labelIdx, names: packages.labels },
    info: infoOf(frame),
  };
}

/** sideOf picks the drawn side: a single graph has only its base. */
export function sideOf(data: FlameData, name: SideName): Side {
  return name === 'head' && data.head ? data.head : data.base;
}
