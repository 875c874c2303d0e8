import React, { useCallback, useContext, useMemo, useState } from 'react';

import { DataFrame } from '@grafana/data';
import { Alert, Button, InlineSwitch, useTheme2 } from '@grafana/ui';

import { selectors } from '../../selectors';
import { strings } from '../../strings';
import { formatShare } from '../format';
import { diffPaletteCSS, DIFF_STEPS } from '../render/colors';
import { PanelOptions } from '../types';
import { ViewContext } from '../viewState';
import { Edges } from './Edges';
import { DEFAULT_CHANGE_SCALE } from './glyph';
import { GlyphTooltip } from './GlyphTooltip';
import { CellRef, Matrix } from './Matrix';
import { Component, parseEvolution, toggle, visibleRows } from './model';
import { Timeline } from './Timeline';

const s = strings.evolution;
const sel = selectors.evolution;

/** Props of EvolutionView: the query's frames, the panel size and options. */
export interface EvolutionViewProps {
  series: DataFrame[];
  width: number;
  height: number;
  options: PanelOptions;
}

/**
 * What the detail pane shows: a build's timeline, or with key the edges of
 * that component's glyph. Names, not objects, so it survives a data refresh.
 */
type Selection = { build: string; key?: string };

const LEGEND_H = 22;
const DETAIL_HEADER_H = 24;
const MIN_COL_W = 40;
const MAX_COL_W = 64;

/**
 * EvolutionView is the Performance Evolution Matrix: components (package >
 * class > method) against builds in time order, one glyph per cell. Clicking
 * a build label shows that build's execution timeline below the matrix;
 * clicking a glyph shows the call edges its build added or removed. The
 * matrix is one tab stop: arrow keys move a glyph focus, Enter acts as a
 * click, Escape closes the detail pane.
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
  const host = useContext(ViewContext);
  const [significantOnly, setSignificantOnlyState] = useState(host?.view.significantOnly ?? true);
  const setSignificantOnly = (v: boolean) => {
    setSignificantOnlyState(v);
    host?.onChange({ significantOnly: v });
  };
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
  const col = selection ? data.builds.findIndex((b) => b.name === selection.build) : -1;
  const row = selection?.key === undefined ? undefined : data.byKey.get(selection.key);
  // Resolved against the current data: a selection that vanished on refresh shows nothing.
  const detail = col < 0 || (selection?.key !== undefined && !row) ? undefined : { build: data.builds[col].name, row };
  const detailH = detail ? Math.round(Math.min(280, height * 0.4)) : 0;
  const matrixH = height - LEGEND_H - detailH;
  const colors = diffPaletteCSS(options.palette);
  const greyNoise = significantOnly && data.hasStats;

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
        {data.hasStats && (
          <span data-testid={sel.significantOnly} title={strings.panel.significantOnlyHelp}>
            <InlineSwitch
              label={strings.panel.significantOnly}
              showLabel
              value={significantOnly}
              onChange={(e) => setSignificantOnly(e.currentTarget.checked)}
            />
          </span>
        )}
        {greyNoise && (
          <>
            <span style={{ width: 10, height: 10, flex: 'none', background: colors[DIFF_STEPS] }} />
            <span>{s.noiseLegend}</span>
          </>
        )}
        <span>· {s.modifiedLegend}</span>
        <span>· {s.timeLegend}</span>
        <span>· {s.changePointLegend}</span>
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
        greyNoise={greyNoise}
        theme={theme}
        selectedBuild={detail && !row ? detail.build : undefined}
        selectedCell={row && { row, col }}
        onToggle={onToggle}
        onBuild={(b) => setSelection({ build: b.name })}
        onCell={(c) => setSelection({ build: data.builds[c.col].name, key: c.row.key })}
        onHover={(c, x, y) => setHover(c && { cell: c, x, y })}
        onEscape={() => {
          setSelection(undefined);
          return detail !== undefined;
        }}
      />
      {detail && (
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
            <span>{detail.row ? s.edgesTitle(detail.row.name, detail.build) : s.timelineTitle(detail.build)}</span>
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
          {detail.row ? (
            <Edges data={data} component={detail.row} build={detail.build} width={width} theme={theme} />
          ) : (
            <Timeline
              data={data}
              build={detail.build}
              rows={rows}
              width={width}
              labelWidth={labelWidth}
              theme={theme}
            />
          )}
        </div>
      )}
      {hover && data.byKey.get(hover.cell.row.key) === hover.cell.row && (
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
