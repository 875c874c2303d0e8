import { css } from '@emotion/css';
import React, { useContext, useMemo, useReducer, useState } from 'react';

import { DataFrame, GrafanaTheme2 } from '@grafana/data';
import { Alert, useStyles2 } from '@grafana/ui';

import { selectors } from '../../selectors';
import { CallTree } from '../calltree/CallTree';
import { ViewSync } from '../split/viewSync';
import { strings } from '../../strings';
import { sideOf } from '../model/flameData';
import { Culprit, culpritSites } from '../model/culprits';
import { focusPath, heaviestNode, isOther, nodeAtPath, pathMatch } from '../model/focus';
import { search } from '../model/search';
import { Querier } from '../query';
import { initialState, reduce } from '../flameViewState';
import { PanelOptions } from '../types';
import { Layout, PanelView, SandwichContext, ViewContext } from '../viewState';
import { Breadcrumb } from './Breadcrumb';
import { Culprits } from './Culprits';
import { FlameCanvas } from './FlameCanvas';
import { FlameToolbar } from './FlameToolbar';
import { HoverInfo } from './HoverInfo';
import { Legend } from './Legend';
import { NodeMenu } from './NodeMenu';
import { GAP, SplitGraphs } from './SplitGraphs';
import { TopTable } from './TopTable';
import { useFlameColors } from './useFlameColors';
import { useFlameQueries } from './useFlameQueries';
import { useFunctionsTable } from './useFunctionsTable';
import { useMeasuredHeight } from './useMeasuredHeight';
import { useRestoredView } from './useRestoredView';
import { useStable } from './useStable';

export interface FlameViewProps {
  /** The panel's frames: flame graph frames (any variants and normalisations), maybe a functions frame. */
  series: DataFrame[];
  /** Runs the panel's query with changes; undefined when the data did not come from a Flamediff query. */
  querier?: Querier;
  options: PanelOptions;
  width: number;
  height: number;
}

const ROW_HEIGHT = 20;
const TOOLBAR_HEIGHT = 40;
const LEGEND_HEIGHT = 24;
const BREADCRUMB_HEIGHT = 28;
/** Below this width the table goes away: the graph needs the room. */
const TABLE_MIN_PANEL_WIDTH = 700;
/** The graph's share of the width beside the call tree: the tree's columns need the rest. */
const GRAPH_SHARE = 0.45;

/**
 * FlameView is the flame graph mode: toolbar, canvas, legend and top table.
 * What it draws comes from the panel's frames or from queries it issues
 * itself (a `focus` drill-down, the other normalisation, the functions table).
 */
export function FlameView({ series, querier, options, width, height }: FlameViewProps) {
  const styles = useStyles2(getStyles);
  // A host page (the report, serve) keeps the view in its URL: start from it.
  const host = useContext(ViewContext);
  const [start] = useState<PanelView>(() => host?.view ?? {});
  // The view (flameViewState.ts); the answers of the panel's own queries are in the hooks below.
  const [state, dispatch] = useReducer(reduce, undefined, () =>
    initialState(start, options.defaultSide, options.layout)
  );
  const { layout, side: sideName, text, exact, picked, significantOnly, zoomed, hover, menu } = state;
  // The split view's graphs follow each other's zoom and pan through it.
  const [sync] = useState(() => new ViewSync());
  // The height of the verdict above the toolbar, and of the toolbar (it wraps in a narrow panel).
  const [verdictHeight, setVerdictHeight] = useState(0);
  const [toolbarHeight, toolbarBox] = useMeasuredHeight(TOOLBAR_HEIGHT);
  const showSandwich = useContext(SandwichContext);
  const flame = useFlameQueries(series, querier, state, dispatch);
  const { norm, drill, alt, frames, variant, data, culprits, onNormalize, canNormalize, drillTo } = flame;
  const sites = useMemo(() => culpritSites(data, culprits), [data, culprits]);
  const { greyNoise, scale, colorIndex, style } = useFlameColors(data, options, significantOnly, sites);
  const side = data ? sideOf(data, sideName) : undefined;
  // The call tree takes the top table's place.
  const showTable = options.showTable && width >= TABLE_MIN_PANEL_WIDTH && layout === 'graph';
  const { functions, table, tableDue } = useFunctionsTable(series, querier, flame, showTable && Boolean(data));
  const found = useMemo(() => (data ? search(data, { text, exact }) : undefined), [data, text, exact]);
  const highlight = useMemo(() => {
    const node = data && picked ? nodeAtPath(data, picked) : -1;
    return node > 0 ? pathMatch(data!, node) : undefined;
  }, [data, picked]);
  useRestoredView({ ...flame, host, start, state, dispatch, drillTo: querier ? drillTo : undefined });
  // The toolbar's actions keep their identity: it is memoised.
  const normalize = useStable(onNormalize);
  const fullDetail = useStable(() => data && drillTo(focusPath(data, zoomed)));

  if (!flame.source && alt === undefined && !drill) {
    return <Alert title={strings.panel.loading} severity="info" data-testid={selectors.panel.loading} />;
  }
  const error = flame.error ?? alt?.error ?? flame.culpritsError;
  if (error || !data || !side) {
    return (
      <Alert title={strings.panel.badFrame} severity="error" data-testid={selectors.panel.error}>
        {error}
      </Alert>
    );
  }

  const showGraph = layout !== 'tree';
  // Base beside head: a diff's two sides (SplitGraphs).
  const split = layout === 'split' && Boolean(data.head);
  const { graphWidth, treeWidth } = widthsOf(layout, width, showTable);
  const above = toolbarHeight + (culprits ? verdictHeight : 0);
  const graphHeight = Math.max(
    ROW_HEIGHT,
    height - above - (data.head ? LEGEND_HEIGHT : 0) - (drill ? BREADCRUMB_HEIGHT : 0)
  );

  const focusLabel = (label: string) => dispatch({ type: 'row', label, node: heaviestNode(data, side, label) });
  // chooseCulprit zooms onto a culprit and highlights its path; one the
  // drawn tree pruned away is queried at full detail.
  const chooseCulprit = (c: Culprit) => {
    const node = nodeAtPath(data, c.path);
    dispatch({ type: 'culprit', path: c.path, node });
    if (node < 0 && querier) {
      drillTo(c.path);
    }
  };
  const hovered = hover.node >= 0 && hover.node < data.n ? hover.node : -1;
  // What both graphs of the split view and the single graph share.
  const canvas = {
    data,
    colorIndex,
    match: highlight ?? found?.match,
    style,
    rowHeight: ROW_HEIGHT,
    focus: state.focus,
    resetSeq: state.resetSeq,
    onDrill: querier ? (node: number) => drillTo(focusPath(data, node)) : undefined,
    // The node menu offers a function's callers and callees (not the root's, not an `other` node's).
    onMenu: showSandwich
      ? (node: number, x: number, y: number) =>
          node > 0 && !isOther(data, node) && dispatch({ type: 'menu', menu: { node, x, y } })
      : undefined,
  };
  const legend = data.head && (
    <Legend palette={options.palette} scale={scale} info={data.info} greyNoise={greyNoise} culprits={sites.size > 0} />
  );
  // The call tree of the drawn frame: the graph's colours, search, culprits and zoom.
  const calltree = (w: number, h: number) => (
    <CallTree
      data={data}
      colorIndex={colorIndex}
      colors={style.colors}
      greyNoise={greyNoise}
      culprits={sites}
      match={found?.match}
      selected={zoomed}
      onSelect={(node) => dispatch({ type: 'select', node })}
      width={w}
      height={h}
    />
  );

  return (
    <div
      className={styles.root}
      data-testid={selectors.panel.root}
      data-variant={frames.has(variant) ? variant : 'normal'}
      data-side={sideName}
      data-normalize={data.info.normalize}
    >
      {data.head && culprits && (
        <Culprits
          culprits={culprits}
          palette={options.palette}
          selected={picked}
          onSelect={chooseCulprit}
          onSandwich={showSandwich}
          maxHeight={Math.floor(height * 0.4)}
          onHeight={setVerdictHeight}
        />
      )}
      <div ref={toolbarBox}>
        <FlameToolbar
          state={state}
          dispatch={dispatch}
          data={data}
          variants={frames}
          matches={found?.count}
          norm={norm}
          onNormalize={canNormalize ? normalize : undefined}
          onFullDetail={querier && zoomed > 0 ? fullDetail : undefined}
          onSandwich={showSandwich}
        />
      </div>
      {drill && <Breadcrumb drill={drill} onPath={drillTo} />}
      <div className={styles.main}>
        <div className={styles.graph} style={{ width: showGraph ? graphWidth : treeWidth }}>
          {split ? (
            <SplitGraphs
              canvas={canvas}
              width={width}
              height={graphHeight}
              hovered={hovered}
              zoomed={zoomed}
              sync={sync}
              dispatch={dispatch}
            />
          ) : showGraph ? (
            <FlameCanvas
              {...canvas}
              side={side}
              width={graphWidth}
              height={graphHeight}
              // The canvas reports from its layout effects: an unchanged report
              // dispatches nothing (React renders for any dispatch, unlike a
              // useState set to its value, and the reports would loop).
              onHover={(node, x, y) => dispatch({ type: 'hover', node, x, y })}
              onZoomed={(node) => node !== zoomed && dispatch({ type: 'zoomed', node })}
            />
          ) : (
            calltree(treeWidth, graphHeight)
          )}
          {menu && showSandwich && (
            <NodeMenu data={data} menu={menu} onClose={() => dispatch({ type: 'menu' })} onSandwich={showSandwich} />
          )}
          <HoverInfo
            data={data}
            node={hovered}
            side={sideName}
            x={hover.x}
            y={hover.y}
            palette={options.palette}
            culprit={sites.get(hovered)}
          />
          {layout !== 'both' && legend}
        </div>
        {layout === 'both' && calltree(treeWidth, graphHeight)}
        {showTable && table && tableDue && (
          <TopTable
            functions={table}
            selected={exact ? text : undefined}
            onSelect={focusLabel}
            height={height - above}
          />
        )}
        {showTable && functions?.error && (
          <Alert title={strings.panel.queryFailed} severity="warning">
            {functions.error}
          </Alert>
        )}
      </div>
      {layout === 'both' && legend}
    </div>
  );
}

/** widthsOf divides the panel's width between the graph and the call tree or the top table. */
function widthsOf(layout: Layout, width: number, showTable: boolean) {
  const graphWidth = Math.max(
    50,
    showTable ? Math.floor(width * 0.62) : layout === 'both' ? Math.floor(width * GRAPH_SHARE) : width
  );
  return { graphWidth, treeWidth: layout === 'both' ? Math.max(50, width - graphWidth - GAP) : width };
}

const getStyles = (theme: GrafanaTheme2) => ({
  root: css({ display: 'flex', flexDirection: 'column', height: '100%', color: theme.colors.text.primary }),
  main: css({ display: 'flex', gap: theme.spacing(1), minHeight: 0 }),
  graph: css({ position: 'relative', flex: 'none' }),
});
