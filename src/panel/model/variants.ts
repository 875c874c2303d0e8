import { DataFrame } from '@grafana/data';

import { isFlameFrame } from './flameData';

/**
 * The trees a flamegraph or diff query returns with the `variants` option, one
 * frame each, named by the frame's meta.custom.variant. A frame without that
 * meta (any other source's) is the normal tree.
 */
export type Variant = 'normal' | 'inverted' | 'collapsed' | 'inverted+collapsed';

/** variantOf names the tree for the inverted and collapse-system toggles. */
export function variantOf(inverted: boolean, collapsed: boolean): Variant {
  if (inverted && collapsed) {
    return 'inverted+collapsed';
  }
  return inverted ? 'inverted' : collapsed ? 'collapsed' : 'normal';
}

const known = new Set<string>(['normal', 'inverted', 'collapsed', 'inverted+collapsed']);

/** frameVariant reads meta.custom.variant; anything unknown or absent is normal. */
export function frameVariant(frame: DataFrame): Variant {
  const v = frame.meta?.custom?.variant;
  return typeof v === 'string' && known.has(v) ? (v as Variant) : 'normal';
}

/**
 * flameFramesByVariant keeps the first flame graph frame of each variant, so
 * that the toggles switch between frames already at hand.
 */
export function flameFramesByVariant(series: DataFrame[]): Map<Variant, DataFrame> {
  const out = new Map<Variant, DataFrame>();
  for (const frame of series) {
    if (!isFlameFrame(frame)) {
      continue;
    }
    const v = frameVariant(frame);
    if (!out.has(v)) {
      out.set(v, frame);
    }
  }
  return out;
}
