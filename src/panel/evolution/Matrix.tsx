import React, { useState } from 'react';

import { GrafanaTheme2 } from '@grafana/data';

import { Palette } from '../render/colors';
import { changeColor, glyphBoxes } from './glyph';
import { Build, Component, EvolutionData, shortName } from './model';
import { evolutionSelectors as sel, evolutionStrings as s } from './strings';

/** Matrix geometry in CSS pixels. */
export const ROW_H = 28;
export const HEADER_H = 26;
const GLYPH_PAD = 3;
const INDENT = 14;
// Rows drawn beyond the viewport on each side, so fast scrolling shows no gaps.
const OVERSCAN = 10;

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
  theme: GrafanaTheme2;
  selectedBuild?: string;
  selectedCell?: CellRef;
  onToggle(c: Component): void;
  onBuild(b: Build): void;
  onCell(c: CellRef): void;
  onHover(c: CellRef | undefined, x: number, y: number): void;
}

/**
 * Matrix draws the component rows against the builds in a scroll box with a
 * sticky header and label column. Only the rows in view (plus OVERSCAN) are
 * rendered, so 500 components x 50 builds stays cheap.
 */
export function Matrix(p: Props) {
  const [scrollTop, setScrollTop] = useState(0);
  const { rows, data, theme, colWidth, labelWidth } = p;
  const first = Math.max(0, Math.floor(scrollTop / ROW_H) - OVERSCAN);
  const last = Math.min(rows.length, Math.ceil((scrollTop + p.height) / ROW_H) + OVERSCAN);
  const shown = rows.slice(first, last);
  const gridW = data.builds.length * colWidth;
  const bg = theme.colors.background.primary;

  // One handler for all glyphs: the glyph group carries its row and column.
  const cellAt = (e: React.MouseEvent): CellRef | undefined => {
    const g = (e.target as Element).closest('[data-row]');
    return g ? { row: rows[Number(g.getAttribute('data-row'))], col: Number(g.getAttribute('data-col')) } : undefined;
  };

  return (
    <div
      style={{ width: p.width, height: p.height, overflow: 'auto', position: 'relative' }}
      onScroll={(e) => setScrollTop(e.currentTarget.scrollTop)}
    >
      <div style={{ width: labelWidth + gridW, height: HEADER_H + rows.length * ROW_H, position: 'relative' }}>
        <div style={{ position: 'sticky', top: 0, zIndex: 2, display: 'flex', height: HEADER_H, background: bg }}>
          <div
            style={{ position: 'sticky', left: 0, zIndex: 3, width: labelWidth, flex: 'none', boxSizing: 'border-box', background: bg, color: theme.colors.text.secondary, lineHeight: `${HEADER_H}px`, paddingLeft: 4 }}
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
        <div style={{ position: 'absolute', top: HEADER_H + first * ROW_H, left: 0, display: 'flex' }}>
          <div style={{ position: 'sticky', left: 0, zIndex: 1, width: labelWidth, flex: 'none', background: bg }}>
            {shown.map((c) => (
              <RowLabel key={c.key} c={c} open={p.expanded.has(c.key)} theme={theme} onToggle={p.onToggle} />
            ))}
          </div>
          <svg
            width={gridW}
            height={shown.length * ROW_H}
            style={{ flex: 'none', cursor: 'pointer' }}
            onMouseMove={(e) => p.onHover(cellAt(e), e.clientX, e.clientY)}
            onMouseLeave={() => p.onHover(undefined, 0, 0)}
            onClick={(e) => {
              const c = cellAt(e);
              if (c) {
                p.onCell(c);
              }
            }}
          >
            {shown.map((c, i) => (
              <g key={c.key} transform={`translate(0, ${i * ROW_H})`}>
                {c.cells.map((cell, j) =>
                  cell ? (
                    <Glyph
                      key={j}
                      row={c}
                      rowIndex={first + i}
                      col={j}
                      build={data.builds[j].name}
                      x={j * colWidth}
                      width={colWidth}
                      selected={p.selectedCell?.row === c && p.selectedCell.col === j}
                      palette={p.palette}
                      changeScale={p.changeScale}
                      theme={theme}
                    />
                  ) : null
                )}
              </g>
            ))}
          </svg>
        </div>
      </div>
    </div>
  );
}

interface GlyphProps {
  row: Component;
  rowIndex: number;
  col: number;
  build: string;
  x: number;
  width: number;
  selected: boolean;
  palette: Palette;
  changeScale: number;
  theme: GrafanaTheme2;
}

function Glyph({ row, rowIndex, col, build, x, width, selected, palette, changeScale, theme }: GlyphProps) {
  const cell = row.cells[col]!;
  const w = width - 2 * GLYPH_PAD;
  const b = glyphBoxes(cell, row, w, ROW_H - 2 * GLYPH_PAD);
  const fill = changeColor(cell.change, changeScale, palette);
  const stroke = selected ? theme.colors.text.primary : undefined;
  return (
    <g
      data-testid={sel.glyph}
      data-row={rowIndex}
      data-col={col}
      data-component={row.name}
      data-kind={row.kind}
      data-build={build}
      transform={`translate(${x + GLYPH_PAD}, ${GLYPH_PAD})`}
    >
      <rect width={width - GLYPH_PAD} height={ROW_H - GLYPH_PAD} x={-GLYPH_PAD / 2} y={-GLYPH_PAD / 2} fill="transparent" stroke={stroke} />
      <rect data-testid={sel.top} x={b.top.x} y={0} width={b.top.width} height={b.top.height} fill={theme.colors.text.secondary} />
      <rect
        data-testid={sel.bottom}
        x={b.bottom.x}
        y={b.bottom.y}
        width={b.bottom.width}
        height={b.bottom.height}
        fill={fill ?? theme.colors.background.secondary}
        stroke={fill ? undefined : theme.colors.border.strong}
      />
    </g>
  );
}

interface RowLabelProps {
  c: Component;
  open: boolean;
  theme: GrafanaTheme2;
  onToggle(c: Component): void;
}

function RowLabel({ c, open, theme, onToggle }: RowLabelProps) {
  const leaf = c.children.length === 0;
  return (
    <div
      data-testid={sel.row}
      data-component={c.name}
      data-kind={c.kind}
      data-depth={c.depth}
      title={`${c.name} (${c.kind})`}
      style={{
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
        style={{ width: 14, border: 'none', padding: 0, background: 'transparent', color: theme.colors.text.secondary, visibility: leaf ? 'hidden' : 'visible', cursor: 'pointer' }}
      >
        {open ? '▾' : '▸'}
      </button>
      {shortName(c)}
    </div>
  );
}
