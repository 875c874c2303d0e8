import React, { useRef, useState } from 'react';

import { GrafanaTheme2 } from '@grafana/data';

import { srOnly } from '../components/srOnly';
import { Palette } from '../render/colors';
import { cellColor, changeColor, glyphBoxes } from './glyph';
import { Build, Component, EvolutionData, rise, shortName } from './model';
import { GridPos, firstGlyph, glyphLabel, isNavKey, moveGlyph, scrollToShow } from './nav';
import { evolutionSelectors as sel, evolutionStrings as s } from './strings';

/** Matrix geometry in CSS pixels. */
export const ROW_H = 28;
export const HEADER_H = 26;
const GLYPH_PAD = 3;
// Width of the change-point bar; it sits in the padding left of the glyph.
const CHANGE_BAR = 3;
const INDENT = 14;
// Rows drawn beyond the viewport on each side, so fast scrolling shows no gaps.
const OVERSCAN = 10;
const CHUNK = 10;

/** A cell under the mouse or clicked: row component and build index. */
export interface CellRef {
  row: Component;
  col: number;
}

interface Props {
  data: EvolutionData;
  rows: Component[];
  expanded: ReadonlySet<string>;
  width: number;
  height: number;
  labelWidth: number;
  colWidth: number;
  palette: Palette;
  changeScale: number;
  /** Draw changes the test across runs does not call significant in grey. */
  greyNoise: boolean;
  theme: GrafanaTheme2;
  selectedBuild?: string;
  selectedCell?: CellRef;
  onToggle(c: Component): void;
  onBuild(b: Build): void;
  onCell(c: CellRef): void;
  onHover(c: CellRef | undefined, x: number, y: number): void;
  /** Escape on the matrix: close the detail pane; false when there was none. */
  onEscape(): boolean;
}

/** The keyboard's glyph by names, so it survives a refresh or a toggle. */
interface KeyGlyph {
  key: string;
  col: number;
}

/**
 * Matrix draws the component rows against the builds in a scroll box with a
 * sticky header and label column. Only the rows in view (plus OVERSCAN) are
 * rendered, so 500 components x 50 builds stays cheap.
 */
export function Matrix(p: Props) {
  // The top row in view, rounded down to a CHUNK: scrolling re-renders once per CHUNK rows.
  const [top, setTop] = useState(0);
  // Likewise the left column in view, rounded down to a CHUNK of builds.
  const [left, setLeft] = useState(0);
  const { rows, data, theme, colWidth, labelWidth } = p;
  const first = Math.max(0, top - OVERSCAN);
  const last = Math.min(rows.length, top + Math.ceil(p.height / ROW_H) + CHUNK + OVERSCAN);
  const cols = { from: Math.max(0, left - 1), to: left + Math.ceil((p.width - labelWidth) / colWidth) + CHUNK + 1 };
  const shown = rows.slice(first, last);
  const gridW = data.builds.length * colWidth;
  const bg = theme.colors.background.primary;
  const scrollRef = useRef<HTMLDivElement>(null);
  const svgRef = useRef<SVGSVGElement>(null);
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
      p.onHover({ row, col: pos.col }, box.left + (pos.col + 0.5) * colWidth, box.top + (pos.row + 0.5) * ROW_H);
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
        p.onCell({ row: rows[at.row], col: at.col });
      }
    } else if (e.key === 'Escape') {
      e.preventDefault();
      if (!p.onEscape()) {
        setKb(undefined);
        p.onHover(undefined, 0, 0);
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
    const sel = p.selectedCell;
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
    p.onHover(undefined, 0, 0);
  };

  // One handler for all glyphs, by position: the inverse of the grid layout.
  const cellAt = (e: React.MouseEvent<SVGSVGElement>): CellRef | undefined => {
    const box = e.currentTarget.getBoundingClientRect();
    const row = rows[Math.floor((e.clientY - box.top) / ROW_H)];
    const col = Math.floor((e.clientX - box.left) / colWidth);
    return row?.cells[col] ? { row, col } : undefined;
  };

  return (
    <>
      <div
        ref={scrollRef}
        data-testid={sel.matrix}
        style={{ width: p.width, height: p.height, overflow: 'auto', position: 'relative', outline: 'none' }}
        tabIndex={0}
        role="application"
        aria-roledescription={s.matrixRole}
        aria-label={s.matrixLabel}
        onKeyDown={onKeyDown}
        onFocus={onFocus}
        onBlur={onBlur}
        onMouseDown={(e) => {
          // A press on a build or toggle button focuses that button, not the matrix.
          pointer.current = !(e.target as Element).closest('button');
        }}
        onScroll={(e) => {
          setTop(Math.floor(e.currentTarget.scrollTop / ROW_H / CHUNK) * CHUNK);
          setLeft(Math.floor(e.currentTarget.scrollLeft / colWidth / CHUNK) * CHUNK);
        }}
      >
        <div style={{ width: labelWidth + gridW, height: HEADER_H + rows.length * ROW_H, position: 'relative' }}>
          <div style={{ position: 'sticky', top: 0, zIndex: 2, display: 'flex', height: HEADER_H, background: bg }}>
            <div
              style={{
                position: 'sticky',
                left: 0,
                zIndex: 3,
                width: labelWidth,
                flex: 'none',
                boxSizing: 'border-box',
                background: bg,
                color: theme.colors.text.secondary,
                lineHeight: `${HEADER_H}px`,
                paddingLeft: 4,
              }}
            >
              {s.component}
            </div>
            {data.builds.map((b) => (
              <button
                key={b.name}
                data-testid={sel.build}
                data-build={b.name}
                title={`${b.name} ${new Date(b.time).toISOString()}`}
                onClick={() => p.onBuild(b)}
                style={{
                  width: colWidth,
                  flex: 'none',
                  border: 'none',
                  padding: 0,
                  cursor: 'pointer',
                  overflow: 'hidden',
                  textOverflow: 'ellipsis',
                  whiteSpace: 'nowrap',
                  fontSize: theme.typography.bodySmall.fontSize,
                  color: theme.colors.text.primary,
                  background: p.selectedBuild === b.name ? theme.colors.action.selected : 'transparent',
                  textDecoration: 'underline dotted',
                }}
              >
                {b.name}
              </button>
            ))}
          </div>
          <div style={{ display: 'flex' }}>
            <div
              style={{
                position: 'sticky',
                left: 0,
                zIndex: 1,
                width: labelWidth,
                height: rows.length * ROW_H,
                flex: 'none',
                background: bg,
              }}
            >
              {shown.map((c, i) => (
                <RowLabel
                  key={c.key}
                  c={c}
                  index={first + i}
                  open={p.expanded.has(c.key)}
                  theme={theme}
                  onToggle={p.onToggle}
                />
              ))}
            </div>
            <svg
              ref={svgRef}
              width={gridW}
              height={rows.length * ROW_H}
              style={{ flex: 'none', cursor: 'pointer' }}
              onMouseMove={(e) => p.onHover(cellAt(e), e.clientX, e.clientY)}
              onMouseLeave={() => p.onHover(undefined, 0, 0)}
              onClick={(e) => {
                const c = cellAt(e);
                if (c) {
                  setKb({ key: c.row.key, col: c.col });
                  p.onCell(c);
                }
              }}
            >
              {shown.map((c, i) => (
                <MatrixRow
                  key={c.key}
                  row={c}
                  index={first + i}
                  builds={data.builds}
                  from={cols.from}
                  to={cols.to}
                  colWidth={colWidth}
                  selectedCol={p.selectedCell?.row === c ? p.selectedCell.col : -1}
                  focusedCol={focusRow === c ? at!.col : -1}
                  unit={data.unit}
                  palette={p.palette}
                  changeScale={p.changeScale}
                  greyNoise={p.greyNoise}
                  theme={theme}
                />
              ))}
            </svg>
          </div>
        </div>
      </div>
      <div style={srOnly} aria-live="polite" data-testid={sel.live}>
        {focusRow && glyphLabel(focusRow, data.builds[at!.col], focusRow.cells[at!.col]!, data.unit)}
      </div>
    </>
  );
}

interface RowProps {
  row: Component;
  index: number;
  builds: Build[];
  /** Columns in view: [from, to). */
  from: number;
  to: number;
  colWidth: number;
  /** Column of the selected glyph in this row, -1 for none. */
  selectedCol: number;
  /** Column of the keyboard's glyph in this row, -1 for none. */
  focusedCol: number;
  unit?: string;
  palette: Palette;
  changeScale: number;
  greyNoise: boolean;
  theme: GrafanaTheme2;
}

// Memoised, with absolute positions: scrolling renders only the rows that come into view.
const MatrixRow = React.memo(function MatrixRow({
  row,
  index,
  builds,
  from,
  to,
  colWidth,
  selectedCol,
  focusedCol,
  ...rest
}: RowProps) {
  return (
    <g transform={`translate(0, ${index * ROW_H})`}>
      {row.cells.slice(from, to).map((cell, i) => {
        const j = from + i;
        return cell ? (
          <Glyph
            key={j}
            row={row}
            col={j}
            build={builds[j]}
            x={j * colWidth}
            width={colWidth}
            selected={selectedCol === j}
            focused={focusedCol === j}
            {...rest}
          />
        ) : null;
      })}
    </g>
  );
});

interface GlyphProps {
  row: Component;
  col: number;
  build: Build;
  x: number;
  width: number;
  selected: boolean;
  focused: boolean;
  unit?: string;
  palette: Palette;
  changeScale: number;
  greyNoise: boolean;
  theme: GrafanaTheme2;
}

function Glyph({
  row,
  col,
  build,
  x,
  width,
  selected,
  focused,
  unit,
  palette,
  changeScale,
  greyNoise,
  theme,
}: GlyphProps) {
  const cell = row.cells[col]!;
  const w = width - 2 * GLYPH_PAD;
  const b = glyphBoxes(cell, row, w, ROW_H - 2 * GLYPH_PAD);
  const fill = cellColor(cell, changeScale, palette, greyNoise);
  return (
    <g
      data-testid={sel.glyph}
      data-component={row.name}
      data-kind={row.kind}
      data-build={build.name}
      data-focused={focused || undefined}
      data-significant={cell.significant ?? undefined}
      role="img"
      aria-label={glyphLabel(row, build, cell, unit)}
      transform={`translate(${x + GLYPH_PAD}, ${GLYPH_PAD})`}
    >
      {selected && (
        <rect
          width={width - GLYPH_PAD}
          height={ROW_H - GLYPH_PAD}
          x={-GLYPH_PAD / 2}
          y={-GLYPH_PAD / 2}
          fill="none"
          stroke={theme.colors.text.primary}
        />
      )}
      {focused && (
        // The keyboard's glyph: a thick outline in the focus colour, outside the selection's.
        <rect
          data-testid={sel.focus}
          width={width - 1}
          height={ROW_H - 1}
          x={-GLYPH_PAD + 0.5}
          y={-GLYPH_PAD + 0.5}
          fill="none"
          stroke={theme.colors.primary.main}
          strokeWidth={2}
        />
      )}
      <rect
        data-testid={sel.top}
        x={b.top.x}
        y={0}
        width={b.top.width}
        height={b.top.height}
        fill={theme.colors.text.secondary}
      />
      <rect
        data-testid={sel.bottom}
        x={b.bottom.x}
        y={b.bottom.y}
        width={b.bottom.width}
        height={b.bottom.height}
        fill={fill ?? theme.colors.background.secondary}
        stroke={fill ? undefined : theme.colors.border.strong}
      />
      {cell.changePoints.length > 0 && (
        // A bar on the glyph's left edge, where the build meets the one before:
        // a change starts here; coloured by the largest change's direction.
        <rect
          data-testid={sel.changePoint}
          data-change={rise(cell.changePoints[0])}
          x={-GLYPH_PAD}
          y={-GLYPH_PAD / 2}
          width={CHANGE_BAR}
          height={ROW_H - GLYPH_PAD}
          fill={changeColor(Math.sign(rise(cell.changePoints[0])) * changeScale, changeScale, palette)}
          stroke={theme.colors.text.primary}
          strokeWidth={0.5}
        />
      )}
    </g>
  );
}

interface RowLabelProps {
  c: Component;
  index: number;
  open: boolean;
  theme: GrafanaTheme2;
  onToggle(c: Component): void;
}

const RowLabel = React.memo(function RowLabel({ c, index, open, theme, onToggle }: RowLabelProps) {
  const leaf = c.children.length === 0;
  return (
    <div
      data-testid={sel.row}
      data-component={c.name}
      data-kind={c.kind}
      data-depth={c.depth}
      title={`${c.name} (${c.kind})`}
      style={{
        position: 'absolute',
        top: index * ROW_H,
        width: '100%',
        height: ROW_H,
        boxSizing: 'border-box',
        lineHeight: `${ROW_H}px`,
        paddingLeft: 4 + c.depth * INDENT,
        whiteSpace: 'nowrap',
        overflow: 'hidden',
        textOverflow: 'ellipsis',
        fontSize: theme.typography.bodySmall.fontSize,
        color: c.kind === 'method' ? theme.colors.text.primary : theme.colors.text.maxContrast,
        fontWeight: c.kind === 'package' ? theme.typography.fontWeightMedium : undefined,
      }}
    >
      <button
        data-testid={sel.toggle}
        aria-label={open ? s.collapse : s.expand}
        aria-expanded={leaf ? undefined : open}
        disabled={leaf}
        onClick={() => onToggle(c)}
        style={{
          width: 14,
          border: 'none',
          padding: 0,
          background: 'transparent',
          color: theme.colors.text.secondary,
          visibility: leaf ? 'hidden' : 'visible',
          cursor: 'pointer',
        }}
      >
        {open ? '▾' : '▸'}
      </button>
      {shortName(c)}
    </div>
  );
});
