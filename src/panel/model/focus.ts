import { FlameData, Side } from './flameData';

/** OTHER is the label of a node that merges the nodes pruning left out. */
const OTHER = 'other';

/** isOther reports whether node i is an `other` node (with statistics: one that merges nodes). */
export function isOther(data: FlameData, i: number): boolean {
  return data.stats ? data.stats.otherCount[i] > 0 : data.labels[data.labelIdx[i]] === OTHER && data.level[i] > 0;
}

/** parentOf is node i's parent, or -1 for a level-0 node. */
export function parentOf(data: FlameData, i: number): number {
  for (let j = i - 1; j >= 0; j--) {
    if (data.level[j] < data.level[i]) {
      return j;
    }
  }
  return -1;
}

/**
 * focusPath is the query model's `focus` for drilling into node i: the labels
 * from the root's child down to it. An `other` node is not a frame: its
 * path is its parent's, whose children the answer then holds in full detail.
 */
export function focusPath(data: FlameData, i: number): string[] {
  return nodePath(data, isOther(data, i) ? parentOf(data, i) : i);
}

/** nodePath is node i's labels from the root's child down to it (nodeAtPath's inverse). */
export function nodePath(data: FlameData, i: number): string[] {
  let at = i;
  const path: string[] = [];
  for (; at >= 0 && data.level[at] > 0; at = parentOf(data, at)) {
    path.push(data.labels[data.labelIdx[at]]);
  }
  return path.reverse();
}

/**
 * nodeAtPath finds the node a focused answer is about: the end of path
 * under the root (the first matching child at each level); -1 if absent.
 */
export function nodeAtPath(data: FlameData, path: string[]): number {
  let at = 0;
  for (const label of path) {
    let child = -1;
    for (let j = at + 1; j < data.end[at]; j = data.end[j]) {
      if (data.labels[data.labelIdx[j]] === label) {
        child = j;
        break;
      }
    }
    if (child < 0) {
      return -1;
    }
    at = child;
  }
  return at;
}

/**
 * pathMatch marks node i's path: its ancestors, itself and its subtree (the
 * rest is drawn dimmed, as outside a search's matches).
 */
export function pathMatch(data: FlameData, i: number): Uint8Array {
  const match = new Uint8Array(data.n);
  match.fill(1, i, data.end[i]);
  for (let at = parentOf(data, i); at >= 0; at = parentOf(data, at)) {
    match[at] = 1;
  }
  return match;
}

/**
 * heaviestNode is the node of a function with the largest total on one side
 * (a top-table row zooms onto it), or -1 when the tree has none.
 */
export function heaviestNode(data: FlameData, side: Side, label: string): number {
  const idx = data.labels.indexOf(label);
  let best = -1;
  for (let i = 0; i < data.n; i++) {
    if (data.labelIdx[i] === idx && (best < 0 || side.total[i] > side.total[best])) {
      best = i;
    }
  }
  return best;
}

/** Keyboard moves through the tree: to the caller, the widest callee, or a sibling. */
export type Move = 'parent' | 'child' | 'prev' | 'next';

/**
 * move returns the node a keyboard step reaches from i on one side (nodes
 * without width on that side are skipped), or i itself when there is none.
 */
export function move(data: FlameData, side: Side, i: number, m: Move): number {
  const drawn = (j: number) => side.total[j] > 0;
  switch (m) {
    case 'parent': {
      const p = parentOf(data, i);
      return p >= 0 ? p : i;
    }
    case 'child': {
      let best = -1;
      for (let j = i + 1; j < data.end[i]; j = data.end[j]) {
        if (drawn(j) && (best < 0 || side.total[j] > side.total[best])) {
          best = j;
        }
      }
      return best >= 0 ? best : i;
    }
    case 'next': {
      const p = parentOf(data, i);
      const stop = p >= 0 ? data.end[p] : data.n;
      for (let j = data.end[i]; j < stop; j = data.end[j]) {
        if (drawn(j)) {
          return j;
        }
      }
      return i;
    }
    case 'prev': {
      const p = parentOf(data, i);
      let last = i;
      for (let j = p + 1; j < i; j = data.end[j]) {
        if (drawn(j)) {
          last = j;
        }
      }
      return last;
    }
  }
}
