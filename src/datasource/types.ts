import { DataSourceJsonData } from '@grafana/data';
import { DataQuery } from '@grafana/schema';

import { QueryType } from './queryTypes';

export type { QueryType } from './queryTypes';

/** Selection picks runs: every run of builds, or only the named runs. */
export interface Selection {
  builds: string[];
  runs: string[];
}

/** The query model sent to the backend (pkg/query.Model). */
export interface FlamediffQuery extends DataQuery {
  queryType: QueryType;
  app: string;
  profileType?: string;
  head: Selection;
  base: Selection;
  /** Builds of an evolution, timeseries or changepoints query; empty = all. */
  builds: string[];
  inverted: boolean;
  collapseSystem: boolean;
  maxNodes: number;
  /** Ask flamegraph/diff queries for all four trees (see docs/PANEL.md). */
  variants: boolean;
  /** Narrows a timeseries to one function's total. */
  function?: string;
  /** Makes a timeseries relative to this build, or to each previous build with "previous". */
  baseline?: string;
  /**
   * Narrows a timeseries to one numeric field (value, change, pValue, significant,
   * regression, changepoint): an alert rule needs exactly one series.
   */
  field?: string;
  /**
   * How a diff's delta is normalised: "absolute" (of the base total, the
   * default) or "relative" (each side as a share of its own total); may be a
   * dashboard variable such as "$normalize".
   */
  normalize?: string;
  /** Significance level of the per-node statistics (default 0.05, in (0, 0.5]). */
  alpha?: number;
  /** A path of labels from the root's child: the answer is that subtree at full detail. */
  focus?: string[];
  /** Evolution components under this share of the total are hidden (default 0.02). */
  threshold?: number;
  /** Change points follow functions reaching this share of a build's total in some build (default 0.01). */
  minShare?: number;
  /** The smallest relative change of a significant change point (default 0.02). */
  minChange?: number;
  /** A function: flamegraph/diff queries answer its callers and callees trees. */
  sandwich?: string;
  /** Keep only the stacks through a frame matching this Go regular expression (pprof's -focus). */
  keep?: string;
  /** Drop the stacks through a frame matching this Go regular expression (pprof's -ignore). */
  drop?: string;
  /** Remove the frames matching this Go regular expression from the stacks (pprof's -hide; DataQuery's hide hides the query). */
  hideFrames?: string;
  /** Cut each stack above its first frame matching this Go regular expression (pprof's -show_from). */
  showFrom?: string;
  /** "new" or "removed": only the stacks new in head, or gone from it. */
  only?: string;
}

/** Defaults of a new query. */
export const defaultQuery: Partial<FlamediffQuery> = {
  queryType: 'diff',
  app: '',
  head: { builds: [], runs: [] },
  base: { builds: [], runs: [] },
  builds: [],
  inverted: false,
  collapseSystem: false,
  maxNodes: 20000,
  variants: true,
};

/** Table names; empty means the default name. */
export interface Tables {
  runs?: string;
  stacks?: string;
  frames?: string;
  samples?: string;
  runStacks?: string;
  changes?: string;
  runFunctions?: string;
  functionTimelines?: string;
}

/** jsonData of the data source (pkg/plugin.Settings). */
export interface FlamediffOptions extends DataSourceJsonData {
  host?: string;
  port?: number;
  protocol?: 'native' | 'http';
  secure?: boolean;
  tlsSkipVerify?: boolean;
  username?: string;
  defaultDatabase?: string;
  /** Seconds, as a string like Grafana's ClickHouse data source. */
  dialTimeout?: string;
  queryTimeout?: string;
  tables?: Tables;
  /** Forces GLOBAL IN (true) or IN (false); unset: detected from system.tables. */
  distributed?: boolean;
  /** Regular expressions marking frames as system code. */
  systemFrames?: string[];
  /** Caps the (run, stack) rows one query may read (default 10,000,000). */
  maxStacks?: number;
  /** Queries run at once (default 1); more wait up to queueTimeout seconds, then fail as busy. */
  maxQueries?: number;
  /** Size of the ClickHouse connection pool (default 2 x maxQueries + 1). */
  maxConnections?: number;
  /** Seconds a query waits for its turn (default 30), a string like the other timeouts. */
  queueTimeout?: string;
  /** MB one query may hold (default 640). */
  maxQueryMemory?: number;
}

/** secureJsonData of the data source. */
export interface FlamediffSecureOptions {
  password?: string;
  tlsCACert?: string;
  tlsClientCert?: string;
  tlsClientKey?: string;
}
