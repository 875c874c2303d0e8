import { DataFrame } from '@grafana/data';

import type { FlamediffQuery } from '../../datasource/types';
import { isFlameFrame } from './flameData';

/**
 * Around is what the panel asks about a culprit on top of its query
 * (docs/QUERIES.md): the sandwich function, the four filters and only.
 * An empty or absent key asks for nothing.
 */
export type Around = {
  sandwich?: string;
  keep?: string;
  drop?: string;
  hideFrames?: string;
  showFrom?: string;
  only?: Only;
};

export type Only = 'new' | 'removed';

/** The filters, in the order pprof applies them (keep and drop judge, hideFrames and showFrom edit). */
export const filterKeys = ['keep', 'drop', 'hideFrames', 'showFrom'] as const;
export type FilterKey = (typeof filterKeys)[number];

/** Every key of Around, in the order of the page's URL. */
export const aroundKeys = ['sandwich', ...filterKeys, 'only'] as const;
export type AroundKey = (typeof aroundKeys)[number];

/** isOnly accepts the two values of only. */
export const isOnly = (v: unknown): v is Only => v === 'new' || v === 'removed';

/** cleanAround drops empty keys and an unknown only, so that equal views compare equal. */
export function cleanAround(a: Around): Around {
  const out: Around = {};
  for (const k of aroundKeys) {
    const v = a[k];
    if (k === 'only' ? isOnly(v) : typeof v === 'string' && v !== '') {
      (out as Record<string, string>)[k] = v as string;
    }
  }
  return out;
}

/** sameAround reports whether two asks are the same query. */
export function sameAround(a: Around, b: Around): boolean {
  const x = cleanAround(a);
  const y = cleanAround(b);
  return aroundKeys.every((k) => x[k] === y[k]);
}

/** aroundOf reads the ask of a query model (its fields already interpolated). */
export function aroundOf(q: Partial<FlamediffQuery> | undefined): Around {
  return cleanAround({
    sandwich: q?.sandwich,
    keep: q?.keep,
    drop: q?.drop,
    hideFrames: q?.hideFrames,
    showFrom: q?.showFrom,
    only: q?.only as Only | undefined,
  });
}

/**
 * aroundPatch is the query patch of an ask: every key set, to undefined when
 * absent, so that it also clears what the panel's own query asked.
 */
export function aroundPatch(a: Around): Around {
  const c = cleanAround(a);
  return Object.fromEntries(aroundKeys.map((k) => [k, c[k]]));
}

/** A sandwich answer: the function's callers and callees trees (each maybe in variants). */
export interface Sandwich {
  fn: string;
  callers: DataFrame[];
  callees: DataFrame[];
}

/**
 * sandwichOf splits a sandwich answer by meta.custom.sandwich; undefined for
 * any other answer (no flame frame says callers or callees).
 */
export function sandwichOf(series: DataFrame[]): Sandwich | undefined {
  const out: Sandwich = { fn: '', callers: [], callees: [] };
  for (const f of series) {
    const part: unknown = f.meta?.custom?.sandwich;
    if (!isFlameFrame(f) || (part !== 'callers' && part !== 'callees')) {
      continue;
    }
    out[part].push(f);
    const fn = f.meta?.custom?.function;
    out.fn = out.fn || (typeof fn === 'string' ? fn : '');
  }
  return out.callers.length > 0 && out.callees.length > 0 ? out : undefined;
}
