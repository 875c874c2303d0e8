import React from 'react';

import { GrafanaTheme2 } from '@grafana/data';

import { selectors } from '../../selectors';
import { Palette } from '../render/colors';
import { cellColor, changeColor, glyphBoxes } from './glyph';
import { Build, Component, rise } from './model';
import { glyphLabel } from './nav';

const sel = selectors.evolution;

const GLYPH_PAD = 3;
// Width of the change-point bar; it sits in the padding left of the glyph.
const CHANGE_BAR = 3;

interface Props {
  row: Component;
  col: number;
  build: Build;
  x: number;
  width: number;
  /** The row's height: the glyph fills it but for GLYPH_PAD on each side. */
  height: number;
  selected: boolean;
  focused: boolean;
  unit?: string;
  palette: Palette;
  changeScale: number;
  greyNoise: boolean;
  theme: GrafanaTheme2;
}

/**
 * Glyph draws one component's cell of one build (glyph.ts: the top bar its
 * share, the bottom its change), its outline when selected or the
 * keyboard's, and a bar on its left where a change point starts.
 */
export function Glyph({
  row,
  col,
  build,
  x,
  width,
  height,
  selected,
  focused,
  unit,
  palette,
  changeScale,
  greyNoise,
  theme,
}: Props) {
  const cell = row.cells[col]!;
  const w = width - 2 * GLYPH_PAD;
  const b = glyphBoxes(cell, row, w, height - 2 * GLYPH_PAD);
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
          height={height - GLYPH_PAD}
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
          height={height - 1}
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
          height={height - GLYPH_PAD}
          fill={changeColor(Math.sign(rise(cell.changePoints[0])) * changeScale, changeScale, palette)}
          stroke={theme.colors.text.primary}
          strokeWidth={0.5}
        />
      )}
    </g>
  );
}
