import { DataFrame, FieldType, createDataFrame } from '@grafana/data';

/** mulberry32 is a small seeded PRNG: the same seed gives the same frame. */
function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const MAX_DEPTH = 48;
const LABELS = 20000;

/** totalsOf sums self values into totals over a pre-order tree, scanning backwards. */
function totalsOf(level: Int32Array, self: Float64Array): Float64Array {
  const total = new Float64Array(level.length);
  const acc = new Float64Array(MAX_DEPTH + 2);
  for (let i = level.length - 1; i >= 0; i--) {
    const l = level[i];
    total[i] = self[i] + acc[l + 1];
    acc[l + 1] = 0;
    acc[l] += total[i];
  }
  return total;
}

/**
 * bigFlameFrame generates a deterministic diff frame of n nodes in Grafana's
 * flame graph format (enum labels, value/self = base, valueRight/selfRight =
 * head, delta), shaped like a deep profile: a few wide subtrees near the root
 * over long narrow stacks; about 2% of nodes exist on one side only. It has
 * the backend's statistics fields too (about 5% of nodes significant; the
 * per-run strings are shared, as their content does not matter here).
 */
export function bigFlameFrame(n: number, seed = 42): DataFrame {
  const rnd = mulberry32(seed);
  const level = new Int32Array(n);
  const label = new Int32Array(n);
  const self = new Float64Array(n);
  const selfRight = new Float64Array(n);
  level[0] = 0;
  label[0] = 0;
  self[0] = 0;
  selfRight[0] = 0;
  for (let i = 1; i < n; i++) {
    const prev = level[i - 1];
    const r = rnd();
    // Go deeper more often than not, else climb back a few levels (rarely
    // many): a few wide subtrees near the root and long narrow stacks.
    const climb = 1 + Math.floor(-Math.log(1 - rnd()) * 2);
    // A new top-level subtree now and then.
    level[i] = rnd() < 1e-4 ? 1 : r < 0.7 && prev < MAX_DEPTH ? prev + 1 : Math.max(2, prev - climb);
    label[i] = 1 + Math.floor(rnd() * rnd() * (LABELS - 1));
    const s = Math.floor(rnd() * 1000);
    const side = rnd();
    self[i] = side < 0.01 ? 0 : s;
    selfRight[i] = side > 0.99 ? 0 : Math.round(s * (0.8 + 0.45 * rnd()));
  }
  const value = totalsOf(level, self);
  const valueRight = totalsOf(level, selfRight);
  const rootBase = value[0] || 1;
  const texts = ['total'];
  for (let k = 1; k < LABELS; k++) {
    texts.push(`github.com/acme/svc${k % 97}/pkg${k % 13}.Func${k}`);
  }
  // Plain packed arrays, like the ones JSON decoding gives a frame.
  const plain = (a: Int32Array | Float64Array) => Array.from(a);
  const delta = valueRight.map((v, i) => (v - value[i]) / rootBase);
  const significant = Array.from({ length: n }, () => rnd() < 0.05);
  const p = Array.from({ length: n }, (_, i) => (significant[i] ? rnd() * 1e-4 : rnd()));
  const runs = '[101.5,99.25,100.75]';
  return createDataFrame({
    meta: { preferredVisualisationType: 'flamegraph' },
    fields: [
      { name: 'level', type: FieldType.number, values: plain(level) },
      { name: 'label', type: FieldType.enum, values: plain(label), config: { type: { enum: { text: texts } } } },
      { name: 'value', type: FieldType.number, values: plain(value), config: { unit: 'ns' } },
      { name: 'self', type: FieldType.number, values: plain(self), config: { unit: 'ns' } },
      { name: 'valueRight', type: FieldType.number, values: plain(valueRight), config: { unit: 'ns' } },
      { name: 'selfRight', type: FieldType.number, values: plain(selfRight), config: { unit: 'ns' } },
      { name: 'delta', type: FieldType.number, values: plain(delta) },
      { name: 'deltaLow', type: FieldType.number, values: plain(delta.map((d) => d - 1e-4)) },
      { name: 'deltaHigh', type: FieldType.number, values: plain(delta.map((d) => d + 1e-4)) },
      { name: 'pValue', type: FieldType.number, values: p },
      { name: 'qValue', type: FieldType.number, values: p.map((x) => Math.min(1, x * 20)) },
      { name: 'significant', type: FieldType.boolean, values: significant },
      { name: 'headRuns', type: FieldType.string, values: new Array(n).fill(runs) },
      { name: 'baseRuns', type: FieldType.string, values: new Array(n).fill(runs) },
      { name: 'otherCount', type: FieldType.number, values: new Array(n).fill(0) },
      { name: 'otherMaxDelta', type: FieldType.number, values: new Array(n).fill(0) },
    ],
  });
}
