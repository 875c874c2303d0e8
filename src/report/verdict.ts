import { DataFrame } from '@grafana/data';

import { toFlameData } from '../panel/model/flameData';

/** One node's change, as the backend's statistics give it (shares of the base total). */
export interface NodeChange {
  label: string;
  delta: number;
  low?: number;
  high?: number;
  q?: number;
}

/**
 * What a diff says once its per-node statistics are read: whether the total
 * changed significantly, and which nodes did. Without statistics (fewer than
 * two runs a side, or an older backend) only the backend's notice is kept.
 */
export type Verdict =
  | { stats: false; notice: string }
  | {
      stats: true;
      alpha?: number;
      /** The root's change: the whole profile's. */
      total: NodeChange & { significant: boolean };
      slower: NodeChange[];
      faster: NodeChange[];
    };

const field = (frame: DataFrame, name: string) => frame.fields.find((f) => f.name === name);

/**
 * verdictOf reads a diff flame graph frame's statistics (fields significant,
 * qValue, deltaLow, deltaHigh; meta.custom.stats and alpha). It returns
 * undefined for a single flame graph, which has nothing to judge. Significant
 * nodes are listed largest change first; `other` nodes are left out (they
 * merge unrelated functions).
 */
export function verdictOf(frame: DataFrame): Verdict | undefined {
  const data = toFlameData(frame);
  if (!data.head) {
    return undefined;
  }
  const significant = field(frame, 'significant');
  if (!significant) {
    const notice = frame.meta?.notices?.map((n) => n.text).join(' ');
    return { stats: false, notice: notice || 'the data source sent no per-node statistics' };
  }
  const num = (name: string, i: number) => {
    const v = field(frame, name)?.values[i];
    return typeof v === 'number' && Number.isFinite(v) ? v : undefined;
  };
  const change = (i: number): NodeChange => ({
    label: data.labels[data.labelIdx[i]],
    delta: data.delta[i],
    low: num('deltaLow', i),
    high: num('deltaHigh', i),
    q: num('qValue', i),
  });
  const slower: NodeChange[] = [];
  const faster: NodeChange[] = [];
  for (let i = 1; i < data.n; i++) {
    if (significant.values[i] === true && data.labels[data.labelIdx[i]] !== 'other') {
      (data.delta[i] > 0 ? slower : faster).push(change(i));
    }
  }
  const byChange = (a: NodeChange, b: NodeChange) => Math.abs(b.delta) - Math.abs(a.delta);
  const alpha = frame.meta?.custom?.alpha;
  return {
    stats: true,
    alpha: typeof alpha === 'number' ? alpha : undefined,
    total: { ...change(0), significant: significant.values[0] === true },
    slower: slower.sort(byChange),
    faster: faster.sort(byChange),
  };
}
