import { DataFrame, FieldType, createDataFrame } from '@grafana/data';

/** A node of a hand-written tree, in pre-order: [level, label, base total, base self, head total, head self]. */
export type Row = [number, string, number, number, number?, number?];

/**
 * flameFrame builds a frame in Grafana's flame graph format from rows; with
 * head values it is a diff frame (value/self = base, valueRight/selfRight = head).
 * enumLabels stores labels as an enum field, as the Flamediff backend does.
 */
export function flameFrame(
  rows: Row[],
  opts: {
    enumLabels?: boolean;
    variant?: string;
    delta?: boolean;
    /** More fields, e.g. the statistics or package fields of the backend. */
    extra?: Array<{ name: string; type: FieldType; values: unknown[]; config?: object }>;
    custom?: Record<string, unknown>;
    notices?: string[];
  } = {}
): DataFrame {
  const isDiff = rows.some((r) => r[4] !== undefined);
  const texts = [...new Set(rows.map((r) => r[1]))];
  const label = opts.enumLabels
    ? {
        name: 'label',
        type: FieldType.enum,
        values: rows.map((r) => texts.indexOf(r[1])),
        config: { type: { enum: { text: texts } } },
      }
    : { name: 'label', type: FieldType.string, values: rows.map((r) => r[1]) };
  const fields = [
    { name: 'level', type: FieldType.number, values: rows.map((r) => r[0]) },
    label,
    { name: 'value', type: FieldType.number, values: rows.map((r) => r[2]), config: { unit: 'ns' } },
    { name: 'self', type: FieldType.number, values: rows.map((r) => r[3]), config: { unit: 'ns' } },
  ];
  if (isDiff) {
    fields.push(
      { name: 'valueRight', type: FieldType.number, values: rows.map((r) => r[4] ?? 0), config: { unit: 'ns' } },
      { name: 'selfRight', type: FieldType.number, values: rows.map((r) => r[5] ?? 0), config: { unit: 'ns' } }
    );
    if (opts.delta) {
      const root = rows[0][2];
      fields.push({ name: 'delta', type: FieldType.number, values: rows.map((r) => ((r[4] ?? 0) - r[2]) / root) });
    }
  }
  const custom = opts.variant || opts.custom ? { ...opts.custom, variant: opts.variant } : undefined;
  return createDataFrame({
    fields: [...fields, ...(opts.extra ?? [])],
    meta: {
      preferredVisualisationType: 'flamegraph',
      custom,
      notices: opts.notices?.map((text) => ({ severity: 'info' as const, text })),
    },
  });
}

/** diffRows: main has a and b on both sides, c only in head, d only in base; gc only in head. */
export const diffRows: Row[] = [
  [0, 'total', 100, 0, 120, 0],
  [1, 'main', 100, 0, 110, 0],
  [2, 'a', 60, 60, 60, 60],
  [2, 'b', 30, 30, 30, 30],
  [2, 'c', 0, 0, 20, 20],
  [2, 'd', 10, 10, 0, 0],
  [1, 'gc', 0, 0, 10, 10],
];

/** recursiveRows: f calls itself; its total must count each sample once. */
export const recursiveRows: Row[] = [
  [0, 'total', 10, 0],
  [1, 'main', 10, 2],
  [2, 'f', 8, 1],
  [3, 'f', 7, 3],
  [4, 'g', 4, 4],
];
