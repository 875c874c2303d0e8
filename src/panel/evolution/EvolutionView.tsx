import React, { useCallback, useMemo, useState } from 'react';

import { DataFrame } from '@grafana/data';
import { Alert, Button, useTheme2 } from '@grafana/ui';

import { formatShare } from '../format';
import { diffPaletteCSS, DIFF_STEPS } from '../render/colors';
import { PanelOptions } from '../types';
import { Edges } from './Edges';
import { DEFAULT_CHANGE_SCALE } from './glyph';
import { GlyphTooltip } from './GlyphTooltip';
import { CellRef, Matrix } from './Matrix';
import { Build, Component, parseEvolution, toggle, visibleRows } from './model';
import { Timeline } from './Timeline';
import { evolutionSelectors as sel, evolutionStrings as s } from './strings';

/** Props of EvolutionView: the query's frames, the panel size and options. */
export interface EvolutionViewProps {
  series: DataFrame[];
  width: number;
  height: number;
  options: PanelOptions;
}

type Selection = { build: Build } | { cell: CellRef } | undefined;

const LEGEND_H = 22;
const DETAIL_HEADER_H = 24;
const MIN_COL_W = 40;
const MAX_COL_W = 64;

/**
 * EvolutionView is the Performance Evolution Matrix: components (package >
 * class > method) against builds in time order, one glyph per cell. Clicking
 * a build label shows that build's execution timeline below the matrix;
 * clicking a glyph shows the call edges its build added or removed.
 */
export function EvolutionView({ series, width, height, options }: EvolutionViewProps) {
  const theme = useTheme2();
  const parsed = useMemo(() => {
    try {
      return { data: parseEvolution(series) };
    } catch (e) {
      return { error: e instanceof Error ? e.message : String(e) };
    }
  }, [series]);
  const [expanded, setExpanded] = useState<ReadonlySet<string>>(new Set());
  const [selection, setSelection] = useState<Selection>();
  const [hover, setHover] = useState<{ cell: CellRef; x: number; y: number }>();
  // Stable, so that memoised row labels do not re-render on every hover.
  const onToggle = useCallback((c: Component) => setExpanded((e) => toggle(e, c.key)), []);
  const rows = useMemo(() => (parsed.data ? visibleRows(parsed.data.roots, expanded) : []), [parsed, expanded]);

  if (!parsed.data) {
    return (
      <Alert title={s.badFrames} severity="error">
        {parsed.error}
      </Alert>
    );
  }
  const data = parsed.data;
  if (data.builds.length === 0) {
    return <Alert title={s.noData} severity="info" />;
  }
  const labelWidth = Math.round(Math.min(320, Math.max(140, width * 0.3)));
  const colWidth = Math.max(MIN_COL_W, Math.min(MAX_COL_W, Math.floor((width - labelWidth - 16) / data.builds.length)));
  const detailH = selection ? Math.round(Math.min(280, height * 0.4)) : 0;
  const matrixH = height - LEGEND_H - detailH;
  const colors = diffPaletteCSS(options.palette);

  return (
    <div
      data-testid={sel.root}
      style={{ width, height, position: 'relative', overflow: 'hidden', color: theme.colors.text.primary }}
    >
      <div
        data-testid={sel.legend}
        style={{
          height: LEGEND_H,
          display: 'flex',
          gap: 8,
          alignItems: 'center',
          fontSize: theme.typography.bodySmall.fontSize,
          color: theme.colors.text.secondary,
          whiteSpace: 'nowrap',
          overflow: 'hidden',
        }}
      >
        <span>
          {formatShare(-DEFAULT_CHANGE_SCALE, true)} {s.faster}
        </span>
        <span
          style={{
            width: 80,
            height: 10,
            flex: 'none',
            background: `linear-gradient(90deg, ${colors[0]}, ${colors[DIFF_STEPS]}, ${colors[2 * DIFF_STEPS]})`,
          }}
        />
        <span>
          {formatShare(DEFAULT_CHANGE_SCALE, true)} {s.slower}
        </span>
        <span>· {s.modifiedLegend}</span>
        <span>· {s.timeLegend}</span>
      </div>
      <Matrix
        data={data}
        rows={rows}
        expanded={expanded}
        width={width}
        height={matrixH}
        labelWidth={labelWidth}
        colWidth={colWidth}
        palette={options.palette}
        changeScale={DEFAULT_CHANGE_SCALE}
        theme={theme}
        selectedBuild={selection && 'build' in selection ? selection.build.name : undefined}
        selectedCell={selection && 'cell' in selection ? selection.cell : undefined}
        onToggle={onToggle}
        onBuild={(b) => setSelection({ build: b })}
        onCell={(c) => setSelection({ cell: c })}
        onHover={(c, x, y) => setHover(c && { cell: c, x, y })}
      />
      {selection && (
        <div style={{ height: detailH, borderTop: `1px solid ${theme.colors.border.weak}`, overflow: 'auto' }}>
          <div
            style={{
              height: DETAIL_HEADER_H,
              display: 'flex',
              alignItems: 'center',
              justifyContent: 'space-between',
              fontSize: theme.typography.bodySmall.fontSize,
            }}
          >
            <span>
              {'build' in selection
                ? s.timelineTitle(selection.build.name)
                : s.edgesTitle(selection.cell.row.name, data.builds[selection.cell.col].name)}
            </span>
            <Button
              data-testid={sel.close}
              size="sm"
              fill="text"
              variant="secondary"
              onClick={() => setSelection(undefined)}
            >
              {s.close}
            </Button>
          </div>
          {'build' in selection ? (
            <Timeline
              data={data}
              build={selection.build.name}
              rows={rows}
              width={width}
              labelWidth={labelWidth}
              theme={theme}
            />
          ) : (
            <Edges
              data={data}
              component={selection.cell.row}
              build={data.builds[selection.cell.col].name}
              width={width}
              theme={theme}
            />
          )}
        </div>
      )}
      {hover && (
        <GlyphTooltip
          cell={hover.cell}
          build={data.builds[hover.cell.col]}
          unit={data.unit}
          x={hover.x}
          y={hover.y}
          theme={theme}
        />
      )}
    </div>
  );
}
