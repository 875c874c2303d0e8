import type { DataFrame, Field, FieldType } from '@grafana/data';

/**
 * A frame's contract: each field the panel reads and the types it may have,
 * by FieldType's values (plain strings: the e2e tests load the models in
 * Node, where @grafana/data's runtime needs a window).
 */
export type Contract = Record<string, ReadonlyArray<`${FieldType}`>>;

/** A frame's contract: the fields it always has, and those it may have. */
export interface FrameContract {
  required: Contract;
  optional: Contract;
}

/**
 * fieldsOf reads a frame's fields through its contract, as Grafana's flame
 * graph reads its frame (@grafana/flamegraph's checkFields): every missing
 * required field and every mistyped field is named in one error, thrown, so
 * that a backend and a panel that disagree say where at once. An optional
 * field the frame lacks is undefined.
 */
export function fieldsOf<R extends Contract, O extends Contract = {}>(
  frame: DataFrame,
  required: R,
  optional?: O
): Record<keyof R, Field> & Partial<Record<keyof O, Field>> {
  const missing: string[] = [];
  const mistyped: string[] = [];
  const out: Record<string, Field> = {};
  const read = (contract: Contract, needed: boolean) => {
    for (const [name, types] of Object.entries(contract)) {
      const f = frame.fields.find((f) => f.name === name);
      if (!f) {
        if (needed) {
          missing.push(name);
        }
      } else if (!types.includes(f.type as `${FieldType}`)) {
        mistyped.push(`${name} is ${f.type}, not ${types.join(' or ')}`);
      } else {
        out[name] = f;
      }
    }
  };
  read(required, true);
  read(optional ?? {}, false);
  if (missing.length > 0 || mistyped.length > 0) {
    const parts = [
      missing.length > 0 ? `missing ${missing.join(', ')}` : '',
      mistyped.length > 0 ? `wrong types: ${mistyped.join('; ')}` : '',
    ];
    throw new Error(`${frame.name ?? 'frame'}: ${parts.filter(Boolean).join('; ')}`);
  }
  return out as Record<keyof R, Field> & Partial<Record<keyof O, Field>>;
}

/** hasFields reports whether a frame has every field of a contract, whatever their types. */
export function hasFields(frame: DataFrame, contract: Contract): boolean {
  return Object.keys(contract).every((name) => frame.fields.some((f) => f.name === name));
}

/**
 * frameContracts is every frame the panel reads, by its name
 * (pkg/frames' Frame* and Field* names, docs/FRAMES.md): the one table of
 * their fields on this side. pkg/frames' TestFrameContracts holds it equal
 * to the frames Go writes: every field Go writes is here with its type,
 * every required one is in every variant Go writes, every optional one in
 * some. The flame graph's required fields are Grafana's own flame graph's,
 * so frames of other sources (Pyroscope) draw too.
 */
export const frameContracts = {
  flamegraph: {
    required: {
      level: ['number'],
      label: ['enum', 'string'],
      value: ['number'],
      self: ['number'],
    },
    optional: {
      valueRight: ['number'],
      selfRight: ['number'],
      delta: ['number'],
      deltaLow: ['number'],
      deltaHigh: ['number'],
      pValue: ['number'],
      qValue: ['number'],
      significant: ['boolean'],
      headRuns: ['string'],
      baseRuns: ['string'],
      otherCount: ['number'],
      otherMaxDelta: ['number'],
      package: ['enum', 'string'],
    },
  },
  functions: {
    required: {
      function: ['string'],
    },
    optional: {
      self: ['number'],
      total: ['number'],
      selfBase: ['number'],
      totalBase: ['number'],
      selfHead: ['number'],
      totalHead: ['number'],
      delta: ['number'],
      deltaLow: ['number'],
      deltaHigh: ['number'],
      pValue: ['number'],
      qValue: ['number'],
      significant: ['boolean'],
      file: ['string'],
      line: ['number'],
      modified: ['boolean'],
    },
  },
  culprits: {
    required: {
      culprit: ['string'],
      module: ['string'],
      kind: ['string'],
      path: ['other', 'string'],
      otherSites: ['other', 'string'],
      callee: ['string'],
      replaced: ['string'],
      delta: ['number'],
      deltaLow: ['number'],
      deltaHigh: ['number'],
      pValue: ['number'],
      qValue: ['number'],
      share: ['number'],
      regression: ['boolean'],
      file: ['string'],
      line: ['number'],
      modified: ['boolean'],
      moved: ['boolean'],
    },
    optional: {},
  },
  runs: {
    required: {
      side: ['string'],
      build: ['string'],
      run: ['string'],
      duration: ['number'],
    },
    optional: {
      time: ['time', 'number'],
      total: ['number'],
    },
  },
  runs_summary: {
    required: {
      side: ['string'],
      pValue: ['number'],
    },
    optional: {
      n: ['number'],
      mean: ['number'],
      median: ['number'],
      stddev: ['number'],
      change: ['number'],
      ciLow: ['number'],
      ciHigh: ['number'],
      significant: ['boolean'],
      mdc: ['number'],
      runsToDecide: ['number'],
    },
  },
  evolution: {
    required: {
      component: ['string'],
      kind: ['string'],
      parent: ['string'],
      build: ['string'],
      buildTime: ['time', 'number', 'string'],
      time: ['number'],
      share: ['number'],
      change: ['number'],
      modified: ['number'],
      added: ['number'],
    },
    optional: {
      modifiedMethods: ['string'],
      addedMethods: ['string'],
      pValue: ['number'],
      qValue: ['number'],
      significant: ['boolean'],
    },
  },
  evolution_edges: {
    required: {
      build: ['string'],
      caller: ['string'],
      callee: ['string'],
      status: ['string'],
    },
    optional: {
      buildTime: ['time', 'number', 'string'],
    },
  },
  evolution_timeline: {
    required: {
      build: ['string'],
      bucket: ['number'],
      component: ['string'],
      kind: ['string'],
      share: ['number'],
    },
    optional: {
      buildTime: ['time', 'number', 'string'],
    },
  },
  changepoints: {
    required: {
      function: ['string'],
      build: ['string'],
      before: ['number'],
      after: ['number'],
      change: ['number'],
      pValue: ['number'],
      significant: ['boolean'],
    },
    optional: {
      previous: ['string'],
      commit: ['string'],
      moved: ['boolean'],
    },
  },
} as const satisfies Record<string, FrameContract>;
