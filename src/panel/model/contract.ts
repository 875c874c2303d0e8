import type { DataFrame, Field, FieldType } from '@grafana/data';

/**
 * A frame's contract: each field the panel reads and the types it may have,
 * by FieldType's values (plain strings: the e2e tests load the models in
 * Node, where @grafana/data's runtime needs a window).
 */
export type Contract = Record<string, ReadonlyArray<`${FieldType}`>>;

/**
 * fieldsOf reads a frame's fields through its contract, as Grafana's flame
 * graph reads its frame (@grafana/flamegraph's checkFields): every missing
 * or mistyped field is named in one error, thrown, so that a backend and a
 * panel that disagree say where at once.
 */
export function fieldsOf<C extends Contract>(frame: DataFrame, contract: C): Record<keyof C, Field> {
  const missing: string[] = [];
  const mistyped: string[] = [];
  const out: Partial<Record<keyof C, Field>> = {};
  for (const [name, types] of Object.entries(contract)) {
    const f = frame.fields.find((f) => f.name === name);
    if (!f) {
      missing.push(name);
    } else if (!types.includes(f.type as `${FieldType}`)) {
      mistyped.push(`${name} is ${f.type}, not ${types.join(' or ')}`);
    } else {
      out[name as keyof C] = f;
    }
  }
  if (missing.length > 0 || mistyped.length > 0) {
    const parts = [
      missing.length > 0 ? `missing ${missing.join(', ')}` : '',
      mistyped.length > 0 ? `wrong types: ${mistyped.join('; ')}` : '',
    ];
    throw new Error(`${frame.name ?? 'frame'}: ${parts.filter(Boolean).join('; ')}`);
  }
  return out as Record<keyof C, Field>;
}
