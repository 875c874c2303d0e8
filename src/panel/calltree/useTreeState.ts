import { useState } from 'react';

import { FlameData } from '../model/flameData';
import { TreeState, withAncestors } from './model';

/** A search opens the callers of at most this many matches (the rest stay one Right away). */
const OPEN_MATCHES = 2000;

/** The tree's state, and what it was made for: the frame and search (of), the graph's last zoomed node (seen). */
type Held = TreeState & { of: unknown[]; seen: number };

/** opened is the tree's first state: the top nodes open, or the callers of a search's matches. */
function opened(data: FlameData, parent: Int32Array, match?: Uint8Array): Set<number> {
  const out = new Set<number>();
  for (let i = 0; i < data.n; i = data.end[i]) {
    out.add(i);
  }
  if (match) {
    let left = OPEN_MATCHES;
    for (let i = 0; i < data.n && left > 0; i++) {
      if (match[i]) {
        left--;
        for (let p = parent[i]; p >= 0 && !out.has(p); p = parent[p]) {
          out.add(p);
        }
      }
    }
  }
  return out;
}

/**
 * useTreeState is the tree's keyboard state (focused row, open rows). It
 * holds for the frame and search it was made on: new ones start afresh. A
 * node zoomed onto in the graph (selected, the last one seen) opens its
 * callers and takes the focus. update sets a new state.
 */
export function useTreeState(
  data: FlameData,
  parent: Int32Array,
  match: Uint8Array | undefined,
  keep: Uint8Array | undefined,
  selected: number
) {
  const shown = (i: number) => i >= 0 && i < data.n && (!keep || keep[i] === 1);
  const fresh = (): Held => {
    const expanded = opened(data, parent, match);
    return shown(selected)
      ? { of: [data, match], seen: selected, focused: selected, expanded: withAncestors(expanded, parent, selected) }
      : { of: [data, match], seen: selected, focused: -1, expanded };
  };
  const [tree, setTree] = useState<Held>(fresh);
  let state = tree;
  if (tree.of[0] !== data || tree.of[1] !== match) {
    state = fresh();
  } else if (tree.seen !== selected) {
    state = shown(selected)
      ? { ...tree, seen: selected, focused: selected, expanded: withAncestors(tree.expanded, parent, selected) }
      : { ...tree, seen: selected };
  }
  if (state !== tree) {
    setTree(state);
  }
  const update = (s: TreeState) => s !== state && setTree({ ...s, of: state.of, seen: state.seen });
  return { state, update };
}
