import { strings } from '../../strings';
import { formatShare, formatValue } from '../format';
import { Build, Cell, Component, rise } from './model';

const s = strings.evolution;

/** The matrix's row and header heights in CSS pixels: the grid the keys move on. */
export const ROW_H = 28;
export const HEADER_H = 26;

/** A glyph position for keyboard navigation: row index into the visible rows, build index. */
export interface GridPos {
  row: number;
  col: number;
}

/** Keys that move the keyboard's glyph. */
export type NavKey = 'ArrowLeft' | 'ArrowRight' | 'ArrowUp' | 'ArrowDown' | 'Home' | 'End' | 'PageUp' | 'PageDown';

const has = (rows: Component[], r: number, c: number) => rows[r]?.cells[c] !== undefined;

/** nearestCol is the column of row r with a glyph nearest to col (the left one on ties); -1 for none. */
export function nearestCol(rows: Component[], r: number, col: number): number {
  const n = rows[r]?.cells.length ?? 0;
  for (let d = 0; d < n; d++) {
    if (has(rows, r, col - d)) {
      return col - d;
    }
    if (has(rows, r, col + d)) {
      return col + d;
    }
  }
  return -1;
}

/** firstGlyph is the top-left glyph: the first row with any glyph, its first build; undefined for none. */
export function firstGlyph(rows: Component[]): GridPos | undefined {
  for (let r = 0; r < rows.length; r++) {
    const c = rows[r].cells.findIndex((x) => x !== undefined);
    if (c >= 0) {
      return { row: r, col: c };
    }
  }
  return undefined;
}

/**
 * moveGlyph is where a key takes the keyboard's glyph: left and right to the
 * previous or next build the component has a glyph in, up and down to the
 * nearest glyph of the next row that has one, Home and End to the row's first
 * and last glyph, PageUp and PageDown by page rows. Where there is no glyph
 * to go to it stays put.
 */
export function moveGlyph(rows: Component[], at: GridPos, key: NavKey, page = 10): GridPos {
  const cells = rows[at.row]?.cells ?? [];
  const along = (from: number, step: number, stop: (c: number) => boolean): GridPos => {
    for (let c = from; !stop(c); c += step) {
      if (cells[c] !== undefined) {
        return { row: at.row, col: c };
      }
    }
    return at;
  };
  const across = (step: number, count: number): GridPos => {
    let found = at;
    for (let r = at.row + step, left = count; r >= 0 && r < rows.length && left > 0; r += step) {
      const c = nearestCol(rows, r, at.col);
      if (c >= 0) {
        found = { row: r, col: c };
        left--;
      }
    }
    return found;
  };
  switch (key) {
    case 'ArrowLeft':
      return along(at.col - 1, -1, (c) => c < 0);
    case 'ArrowRight':
      return along(at.col + 1, 1, (c) => c >= cells.length);
    case 'Home':
      return along(0, 1, (c) => c >= cells.length);
    case 'End':
      return along(cells.length - 1, -1, (c) => c < 0);
    case 'ArrowUp':
      return across(-1, 1);
    case 'ArrowDown':
      return across(1, 1);
    case 'PageUp':
      return across(-1, page);
    case 'PageDown':
      return across(1, page);
  }
}

/** isNavKey tells the keys moveGlyph handles. */
export function isNavKey(key: string): key is NavKey {
  return ['ArrowLeft', 'ArrowRight', 'ArrowUp', 'ArrowDown', 'Home', 'End', 'PageUp', 'PageDown'].includes(key);
}

/**
 * scrollToShow is the scroll offset that brings [start, start + size) into a
 * view of length view at offset scroll, moving as little as possible.
 */
export function scrollToShow(scroll: number, view: number, start: number, size: number): number {
  if (start < scroll) {
    return start;
  }
  if (start + size > scroll + view) {
    return Math.min(start, start + size - view);
  }
  return scroll;
}

/** glyphLabel is a glyph's accessible name: component, build, time, share, change and change points. */
export function glyphLabel(row: Component, build: Build, cell: Cell, unit?: string): string {
  const cps = cell.changePoints;
  const top = cps[0];
  return s.glyphLabel({
    component: row.name,
    kind: row.kind,
    build: build.name,
    time: formatValue(cell.time, unit),
    share: formatShare(cell.share),
    change: cell.change === null ? s.noChange : formatShare(cell.change, true),
    significance: cell.significant === null ? undefined : s.significant(cell.significant),
    modified: cell.modified,
    added: cell.added,
    changePoint: top && {
      count: cps.length,
      function: top.function,
      change: top.change === null ? s.appeared : formatShare(top.change, true),
      slower: rise(top) > 0,
    },
  });
}
