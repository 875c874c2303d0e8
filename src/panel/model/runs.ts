import { DataFrame, Field } from '@grafana/data';

import { fieldsOf, frameContracts, hasFields } from './contract';

/** One run of a perf test, from the runs frame. */
export interface Run {
  side: 'head' | 'base';
  build: string;
  run: string;
  time?: number;
  duration: number;
  total?: number;
}

/** Per-side statistics of the summary frame. */
export interface SideSummary {
  mean: number;
  median: number;
  stddev: number;
}

/** The summary frame: per side figures and the head-vs-base comparison. */
export interface RunsSummary {
  sides: Partial<Record<'head' | 'base', SideSummary>>;
  change?: number;
  ciLow?: number;
  ciHigh?: number;
  pValue?: number;
  significant?: boolean;
  /** The smallest change of the mean total these runs detect with 80% power (docs/STATISTICS.md). */
  mdc?: number;
  /** The runs a side that would detect the gate's default threshold (1%). */
  runsToDecide?: number;
}

const { runs, runs_summary: summary } = frameContracts;

/** isRunsFrame: one row per run (side, build, run, duration). */
export function isRunsFrame(frame: DataFrame): boolean {
  return hasFields(frame, runs.required);
}

/** isSummaryFrame: the comparison of the runs (per side, with pValue; flame graph and functions frames have pValue too). */
export function isSummaryFrame(frame: DataFrame): boolean {
  return hasFields(frame, summary.required);
}

function num(f: Field | undefined, i: number): number | undefined {
  const v = f?.values[i];
  return v === null || v === undefined || v === '' ? undefined : Number(v);
}

/** parseRuns reads the runs frame; rows with a side other than head/base are an error. */
export function parseRuns(frame: DataFrame): Run[] {
  const { side, build, run, duration, time, total } = fieldsOf(frame, runs.required, runs.optional);
  const out: Run[] = [];
  for (let i = 0; i < duration.values.length; i++) {
    const s = String(side.values[i]);
    if (s !== 'head' && s !== 'base') {
      throw new Error(`runs frame: row ${i} has side ${JSON.stringify(s)}, want head or base`);
    }
    out.push({
      side: s,
      build: String(build.values[i]),
      run: String(run.values[i]),
      time: num(time, i),
      duration: Number(duration.values[i]),
      total: num(total, i),
    });
  }
  return out;
}

/** runsUnit is the unit of what run details plot (measure): the total's, else the duration's. */
export function runsUnit(frame: DataFrame): string | undefined {
  const f = fieldsOf(frame, runs.required, runs.optional);
  return (f.total ?? f.duration).config?.unit;
}

/**
 * parseSummary reads the summary frame: one row per side (side, mean, median,
 * stddev) with the comparison (change, ciLow, ciHigh, pValue, significant)
 * taken from the first row that has it.
 */
export function parseSummary(frame: DataFrame): RunsSummary {
  const f = fieldsOf(frame, summary.required, summary.optional);
  const rows = frame.length ?? f.pValue.values.length;
  const out: RunsSummary = { sides: {} };
  for (let i = 0; i < rows; i++) {
    const s = String(f.side.values[i]);
    if (s === 'head' || s === 'base') {
      out.sides[s] = {
        mean: num(f.mean, i) ?? NaN,
        median: num(f.median, i) ?? NaN,
        stddev: num(f.stddev, i) ?? NaN,
      };
    }
    out.change ??= num(f.change, i);
    out.ciLow ??= num(f.ciLow, i);
    out.ciHigh ??= num(f.ciHigh, i);
    out.pValue ??= num(f.pValue, i);
    out.mdc ??= num(f.mdc, i);
    out.runsToDecide ??= num(f.runsToDecide, i);
    const sig = f.significant?.values[i];
    if (out.significant === undefined && sig !== null && sig !== undefined) {
      out.significant = Boolean(sig);
    }
  }
  return out;
}

/** The dashboard variables that select two runs for an individual comparison. */
export interface ComparisonVars {
  'var-base_build': string;
  'var-base_run': string;
  'var-head_build': string;
  'var-head_run': string;
}

/**
 * comparisonVars turns two picked runs into dashboard variables: a base and a
 * head run keep their sides; two runs of one side compare the first picked
 * (as base) with the second (as head).
 */
export function comparisonVars(first: Run, second: Run): ComparisonVars {
  const [base, head] = first.side === 'head' && second.side === 'base' ? [second, first] : [first, second];
  return {
    'var-base_build': base.build,
    'var-base_run': base.run,
    'var-head_build': head.build,
    'var-head_run': head.run,
  };
}

/**
 * measure is what run details plot for a run: its profile total when the
 * frame has one (the summary's statistics are about it), else its duration.
 */
export function measure(r: Run): number {
  return r.total ?? r.duration;
}

/** spread is the min and max measure of a side's runs. */
export function spread(runs: Run[]): [number, number] | undefined {
  if (runs.length === 0) {
    return undefined;
  }
  let lo = Infinity;
  let hi = -Infinity;
  for (const r of runs) {
    lo = Math.min(lo, measure(r));
    hi = Math.max(hi, measure(r));
  }
  return [lo, hi];
}
