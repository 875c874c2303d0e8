import React, { RefObject, useRef, useState } from 'react';

import type { CellRef, MatrixProps } from './Matrix';
import { Component } from './model';
import { GridPos, HEADER_H, ROW_H, firstGlyph, isNavKey, moveGlyph, scrollToShow } from './nav';

/** The keyboard's glyph by names, so it survives a refresh or a toggle. */
interface KeyGlyph {
  key: string;
  col: number;
}

/** What of the matrix's props the keyboard needs. */
type Options = Pick<
  MatrixProps,
  'rows' | 'data' | 'labelWidth' | 'colWidth' | 'selectedCell' | 'onHover' | 'onCell' | 'onEscape'
>;

/**
 * useKeyGlyph is the matrix's keyboard (docs/EVOLUTION_PANEL.md): the glyph the
 * arrows move (at, its row focusRow while the matrix has focus), shown
 * with its tooltip, and the scroll box's key, focus and mouse handlers.
 */
export function useKeyGlyph(
  p: Options,
  /** The matrix's scroll box and its glyphs' svg. */
  scrollRef: RefObject<HTMLDivElement | null>,
  svgRef: RefObject<SVGSVGElement | null>
) {
  const { rows, data, labelWidth, colWidth, selectedCell, onHover, onCell, onEscape } = p;
  // Focus from a mouse press shows no keyboard glyph: the hover does that.
  const pointer = useRef(false);
  const [kb, setKb] = useState<KeyGlyph>();
  const [hasFocus, setHasFocus] = useState(false);

  // The keyboard's glyph in the visible rows: its row, or the nearest shown
  // ancestor's when a collapse hid it; undefined when gone.
  const resolve = (g: KeyGlyph | undefined): GridPos | undefined => {
    for (let c: Component | undefined = g && data.byKey.get(g.key); g && c; c = c.parent) {
      const r = rows.indexOf(c);
      if (r >= 0) {
        return rows[r].cells[g.col] ? { row: r, col: g.col } : firstInRow(r);
      }
    }
    return undefined;
  };
  const firstInRow = (r: number): GridPos | undefined => {
    const col = rows[r].cells.findIndex((x) => x !== undefined);
    return col >= 0 ? { row: r, col } : undefined;
  };
  const at = resolve(kb);
  const focusRow = hasFocus && at ? rows[at.row] : undefined;

  // show makes pos the keyboard's glyph: scrolled into view, with its tooltip.
  const show = (pos: GridPos) => {
    const row = rows[pos.row];
    setKb({ key: row.key, col: pos.col });
    const div = scrollRef.current;
    if (div) {
      div.scrollTop = scrollToShow(div.scrollTop, div.clientHeight - HEADER_H, pos.row * ROW_H, ROW_H);
      div.scrollLeft = scrollToShow(div.scrollLeft, div.clientWidth - labelWidth, pos.col * colWidth, colWidth);
    }
    const box = svgRef.current?.getBoundingClientRect();
    if (box) {
      onHover({ row, col: pos.col }, box.left + (pos.col + 0.5) * colWidth, box.top + (pos.row + 0.5) * ROW_H);
    }
  };
  const onKeyDown = (e: React.KeyboardEvent<HTMLDivElement>) => {
    // Keys on the build and toggle buttons inside are theirs.
    if (e.target !== e.currentTarget) {
      return;
    }
    pointer.current = false;
    if (isNavKey(e.key)) {
      e.preventDefault();
      const from = at ?? firstGlyph(rows);
      if (from) {
        const page = Math.max(1, Math.floor((e.currentTarget.clientHeight - HEADER_H) / ROW_H) - 1);
        show(at ? moveGlyph(rows, from, e.key, page) : from);
      }
    } else if (e.key === 'Enter' || e.key === ' ') {
      e.preventDefault();
      if (at) {
        onCell({ row: rows[at.row], col: at.col });
      }
    } else if (e.key === 'Escape') {
      e.preventDefault();
      if (!onEscape()) {
        setKb(undefined);
        onHover(undefined, 0, 0);
      }
    }
  };
  const onFocus = (e: React.FocusEvent<HTMLDivElement>) => {
    if (e.target !== e.currentTarget) {
      return;
    }
    setHasFocus(true);
    if (pointer.current) {
      return;
    }
    const sel = selectedCell;
    const selRow = sel ? rows.indexOf(sel.row) : -1;
    const pos = at ?? (selRow >= 0 ? { row: selRow, col: sel!.col } : firstGlyph(rows));
    if (pos) {
      show(pos);
    }
  };
  const onBlur = (e: React.FocusEvent<HTMLDivElement>) => {
    if (e.target !== e.currentTarget) {
      return;
    }
    setHasFocus(false);
    pointer.current = false;
    onHover(undefined, 0, 0);
  };

  return {
    at,
    focusRow,
    onKeyDown,
    onFocus,
    onBlur,
    // A press on a build or toggle button focuses that button, not the matrix.
    onMouseDown: (e: React.MouseEvent) => {
      pointer.current = !(e.target as Element).closest('button');
    },
    /** A click on a glyph makes it the keyboard's. */
    choose: (c: CellRef) => setKb({ key: c.row.key, col: c.col }),
  };
}
