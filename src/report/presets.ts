// What `flamediff serve` opens on, and its preset comparisons.
import { FlamediffQuery, defaultQuery } from '../datasource/types';

/** A build as the builds resource lists it (pkg/plugin/resources.go), oldest first. */
export interface BuildInfo {
  name: string;
  time: string;
  runs: number;
}

/** The presets of serve's menu. */
export type Preset = 'previous' | 'against' | 'headOnly';

const none = { builds: [], runs: [] };

function diff(app: string, head: string, base: string): FlamediffQuery {
  return {
    ...(defaultQuery as FlamediffQuery),
    refId: 'A',
    queryType: 'diff',
    app,
    head: { builds: [head], runs: [] },
    base: { builds: [base], runs: [] },
  };
}

/**
 * openingQuery is what serve shows with nothing in its URL: the newest
 * build of app against the build before it, both with runs; a single
 * build's flame graph when it has no other; undefined without builds.
 */
export function openingQuery(app: string, builds: BuildInfo[]): FlamediffQuery | undefined {
  const withRuns = builds.filter((b) => b.runs > 0);
  const head = withRuns[withRuns.length - 1];
  if (!head) {
    return undefined;
  }
  const base = withRuns[withRuns.length - 2];
  return base ? diff(app, head.name, base.name) : applyPreset(diff(app, head.name, head.name), 'headOnly', builds);
}

/**
 * applyPreset turns q into a preset: its head (the newest build when it has
 * none) against the build with runs before it, against build base, or the
 * head's runs alone (a flame graph). Undefined when the preset has no
 * build to compare with.
 */
export function applyPreset(
  q: FlamediffQuery,
  preset: Preset,
  builds: BuildInfo[],
  base?: string
): FlamediffQuery | undefined {
  const withRuns = builds.filter((b) => b.runs > 0);
  const head = q.head?.builds.length ? q.head : { builds: withRuns.slice(-1).map((b) => b.name), runs: [] };
  if (head.builds.length === 0) {
    return undefined;
  }
  switch (preset) {
    case 'headOnly':
      return { ...q, queryType: 'flamegraph', head, base: none };
    case 'against':
      return base ? { ...q, queryType: 'diff', head, base: { builds: [base], runs: [] } } : undefined;
    case 'previous': {
      // The build with runs just before the head's oldest build.
      const first = Math.min(...head.builds.map((h) => withRuns.findIndex((b) => b.name === h)).filter((i) => i >= 0));
      const prev = Number.isFinite(first) && first > 0 ? withRuns[first - 1] : undefined;
      return prev ? { ...q, queryType: 'diff', head, base: { builds: [prev.name], runs: [] } } : undefined;
    }
  }
}
