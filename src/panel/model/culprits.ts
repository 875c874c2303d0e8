import type { DataFrame, Field } from '@grafana/data';

import { fieldsOf, frameContracts } from './contract';
import { FlameData } from './flameData';
import { nodeAtPath } from './focus';

/** How a change enters the tree at a culprit (docs/CULPRITS.md). */
export type CulpritKind = 'new' | 'removed' | 'self' | 'spread' | 'replaced';

/**
 * One row of a `culprits` frame (pkg/frames.Culprits): where a change of a
 * diff enters the tree drawn beside it. Numbers are NaN where undefined.
 */
export interface Culprit {
  function: string;
  module: string;
  kind: CulpritKind;
  /** Call path of the first site, root side first, ending with the function; [] for the root. */
  path: string[];
  otherSites: string[][];
  /** The call holding most of a new, removed or spread culprit's change; a replaced culprit's new callee ("" when none). */
  callee: string;
  /** The callee a replaced or removed culprit no longer calls ("" for the other kinds). */
  replaced: string;
  /** Found in work that moved: the delta is the cost change inside it, not the moved work. */
  moved: boolean;
  delta: number;
  deltaLow: number;
  deltaHigh: number;
  pValue: number;
  qValue: number;
  /** Share of the total change it explains. */
  share: number;
  regression: boolean;
  /** Source file and line ("" and 0 when unknown). */
  file: string;
  line: number;
  /** Whether the head build's recorded changes name the function. */
  modified: boolean;
}

/** The backend's verdict of a diff (pkg/verdict, meta.custom.verdict of a culprits frame): the fields the panel shows. */
export interface Verdict {
  /** PASS, FAIL or INCONCLUSIVE. */
  result: string;
  /** The first line: the top culprit's sentence (names in backticks), or why there is none. */
  headline: string;
  why: string;
  normalize?: string;
  /** What the runs can see: the minimum detectable change, what a PASS rules out, the runs that would decide. */
  power?: string;
}

/** A culprits frame read: the verdict and the culprits of its tree, regressions and improvements apart. */
export interface Culprits {
  verdict?: Verdict;
  regressions: Culprit[];
  improvements: Culprit[];
}

/** The name of a culprits frame (pkg/frames.FrameCulprits). */
export const culpritsFrameName = 'culprits';

/** The culprits frame's fields (frameContracts, docs/FRAMES.md). */
const culpritsContract = frameContracts.culprits.required;

/** A culprits field's name, checked against the contract. */
const field = (name: keyof typeof culpritsContract) => name;

/** isCulpritsFrame reports whether a frame is a `culprits` answer. */
export function isCulpritsFrame(frame: DataFrame | undefined): frame is DataFrame {
  return frame?.name === culpritsFrameName && frame.fields.some((f) => f.name === field('culprit'));
}

/**
 * culpritsFrameOf finds the culprits of a flame graph frame: the backend
 * sends each tree's culprits frame right after it. lists are the answers
 * the frame may come from; undefined when none holds it (a single flame
 * graph, another data source, an older backend).
 */
export function culpritsFrameOf(
  frame: DataFrame | undefined,
  lists: Array<DataFrame[] | undefined>
): DataFrame | undefined {
  for (const list of lists) {
    const i = frame && list ? list.indexOf(frame) : -1;
    if (i >= 0) {
      return isCulpritsFrame(list![i + 1]) ? list![i + 1] : undefined;
    }
  }
  return undefined;
}

/** A JSON field's value: parsed already (a frame from JSON) or a string. */
function json(v: unknown): unknown {
  if (typeof v !== 'string') {
    return v;
  }
  try {
    return JSON.parse(v);
  } catch {
    return undefined;
  }
}

const strings = (v: unknown): string[] => (Array.isArray(v) ? v.map(String) : []);

/** verdictOf reads a culprits frame's meta.custom.verdict; undefined when absent or malformed. */
export function verdictOf(frame: DataFrame): Verdict | undefined {
  const v = frame.meta?.custom?.verdict;
  if (!v || typeof v.result !== 'string' || typeof v.headline !== 'string') {
    return undefined;
  }
  const power = typeof v.power?.sentence === 'string' ? v.power.sentence : undefined;
  return { result: v.result, headline: v.headline, why: String(v.why ?? ''), normalize: v.normalize, power };
}

/**
 * parseCulprits reads a culprits frame in its order (largest change first)
 * through culpritsContract; a frame that breaks it throws an error naming
 * every missing or mistyped field.
 */
export function parseCulprits(frame: DataFrame): Culprits {
  const f = fieldsOf(frame, culpritsContract);
  const str = (field: Field, i: number) => String(field.values[i] ?? '');
  const num = (field: Field, i: number) => {
    const v = field.values[i];
    return v === null || v === undefined ? NaN : Number(v);
  };
  const out: Culprits = { verdict: verdictOf(frame), regressions: [], improvements: [] };
  for (let i = 0; i < frame.length; i++) {
    const others = json(f.otherSites.values[i]);
    const c: Culprit = {
      function: str(f.culprit, i),
      module: str(f.module, i),
      kind: f.kind.values[i] as CulpritKind,
      path: strings(json(f.path.values[i])),
      otherSites: (Array.isArray(others) ? others : []).map(strings),
      callee: str(f.callee, i),
      replaced: str(f.replaced, i),
      delta: num(f.delta, i),
      deltaLow: num(f.deltaLow, i),
      deltaHigh: num(f.deltaHigh, i),
      pValue: num(f.pValue, i),
      qValue: num(f.qValue, i),
      share: num(f.share, i),
      regression: f.regression.values[i] === true,
      file: str(f.file, i),
      line: num(f.line, i) || 0,
      modified: f.modified.values[i] === true,
      moved: f.moved.values[i] === true,
    };
    (c.regression ? out.regressions : out.improvements).push(c);
  }
  return out;
}

/** A piece of a verdict's sentence: plain text, or a name the backend put in backticks. */
export interface Segment {
  text: string;
  code: boolean;
}

/** segments splits a verdict sentence at its backticks (Markdown code spans). */
export function segments(sentence: string): Segment[] {
  return sentence
    .split('`')
    .map((text, i) => ({ text, code: i % 2 === 1 }))
    .filter((s) => s.text !== '');
}

/** plainText is a verdict sentence as the panel shows it: without the backticks. */
export const plainText = (sentence: string) => sentence.replace(/`/g, '');

/** samePath reports whether two call paths are equal. */
export function samePath(a: string[] | undefined, b: string[] | undefined): boolean {
  return a !== undefined && b !== undefined && a.length === b.length && a.every((l, i) => l === b[i]);
}

/** source is a culprit's file:line ("" when the file is unknown). */
export function source(c: Culprit): string {
  return c.file ? (c.line > 0 ? `${c.file}:${c.line}` : c.file) : '';
}

/**
 * culpritSites maps each node of the drawn tree where a culprit enters (its
 * call path and its other sites, as the backend found them in this tree) to
 * the culprit. The graph colours these nodes by their change even where the
 * tree's own test calls them noise, so that it shows what the verdict names
 * (docs/CULPRITS.md: the descent finds changes the family over every node
 * misses).
 */
export function culpritSites(data: FlameData | undefined, c: Culprits | undefined): Map<number, Culprit> {
  const out = new Map<number, Culprit>();
  if (!data || !c) {
    return out;
  }
  for (const culprit of [...c.regressions, ...c.improvements]) {
    for (const path of [culprit.path, ...culprit.otherSites]) {
      const node = nodeAtPath(data, path);
      if (node >= 0 && !out.has(node)) {
        out.set(node, culprit);
      }
    }
  }
  return out;
}
