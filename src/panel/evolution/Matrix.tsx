import React, { useRef, useState } from 'react';

import { GrafanaTheme2 } from '@grafana/data';

import { selectors } from '../../selectors';
import { strings } from '../../strings';
import { srOnly } from '../components/srOnly';
import { Palette } from '../render/colors';
import { Glyph } from './GlyphSvg';
import { Build, Component, EvolutionData, shortName } from './model';
import { HEADER_H, ROW_H, glyphLabel } from './nav';
import { useKeyGlyph } from './useKeyGlyph';

const s = strings.evolution;
const sel = selectors.evolution;

// A label's indent per depth, in CSS pixels (the row and header heights are in nav.ts).
const INDENT = 14;
// Rows drawn beyond the viewport on each side, so fast scrolling shows no gaps.
const OVERSCAN = 10;
const CHUNK = 10;

/** A cell under the mouse or clicked: row component and build index. */
export interface CellRef {
  row: Component;
  col: number;
}

export interface MatrixProps {
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

/**
 * Matrix draws the component rows against the builds in a scroll box with a
 * sticky header and label column. Only the rows in view (plus OVERSCAN) are
 * rendered, so 500 components x 50 builds stays cheap.
 */
export function Matrix(p: MatrixProps) {
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
  const keys = useKeyGlyph(p, scrollRef, svgRef);
  const { at, focusRow } = keys;

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
        onKeyDown={keys.onKeyDown}
        onFocus={keys.onFocus}
        onBlur={keys.onBlur}
        onMouseDown={keys.onMouseDown}
        onScroll={(e) => {
          setTop(Math.floor(e.currentTarget.scrollTop / ROW_H / CHUNK) * CHUNK);
          setLeft(Math.floor(e.currentTarget.scrollLeft / colWidth / CHUNK) * CHUNK);
        }}
      >
        <div style={{ width: labelWidth + gridW, height: HEADER_H + rows.length * ROW_H, position: 'relative' }}>
          <BuildHeader
            builds={data.builds}
            labelWidth={labelWidth}
            colWidth={colWidth}
            selected={p.selectedBuild}
            theme={theme}
            onBuild={p.onBuild}
          />
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
                  keys.choose(c);
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

interface HeaderProps {
  builds: Build[];
  labelWidth: number;
  colWidth: number;
  selected?: string;
  theme: GrafanaTheme2;
  onBuild(b: Build): void;
}

/** BuildHeader is the matrix's sticky first row: a button per build, over its column. */
function BuildHeader({ builds, labelWidth, colWidth, selected, theme, onBuild }: HeaderProps) {
  const bg = theme.colors.background.primary;
  return (
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
      {builds.map((b) => (
        <button
          key={b.name}
          data-testid={sel.build}
          data-build={b.name}
          title={`${b.name} ${new Date(b.time).toISOString()}`}
          onClick={() => onBuild(b)}
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
            background: selected === b.name ? theme.colors.action.selected : 'transparent',
            textDecoration: 'underline dotted',
          }}
        >
          {b.name}
        </button>
      ))}
    </div>
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
            height={ROW_H}
            selected={selectedCol === j}
            focused={focusedCol === j}
            {...rest}
          />
        ) : null;
      })}
    </g>
  );
});

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
