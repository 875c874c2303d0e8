import { css } from '@emotion/css';
import React, { useCallback, useContext, useEffect, useMemo, useReducer, useRef, useState } from 'react';

import { DataFrame, GrafanaTheme2 } from '@grafana/data';
import { Alert, ContextMenu, Menu, useStyles2 } from '@grafana/ui';

import { selectors } from '../../selectors';
import { CallTree } from '../calltree/CallTree';
import { ViewSync } from '../split/viewSync';
import { strings } from '../../strings';
import { FlameData, Normalization, infoOf, isFlameFrame, sideOf, toFlameData } from '../model/flameData';
import { Culprit, Culprits as CulpritsData, culpritSites, culpritsFrameOf, parseCulprits } from '../model/culprits';
import { focusPath, isOther, nodeAtPath, nodePath, pathMatch } from '../model/focus';
import { Functions, isFunctionsFrame, parseFunctions, totalsOf, withSelfDeltas } from '../model/functions';
import { search } from '../model/search';
import { flameFramesByVariant, variantOf } from '../model/variants';
import { Querier, keepNormalization } from '../query';
import { chosenFor, initialState, panelView, reduce } from '../flameViewState';
import { PanelOptions } from '../types';
import { FiltersContext, PanelView, SandwichContext, ViewContext } from '../viewState';
import { Breadcrumb, Drill } from './Breadcrumb';
import { Culprits } from './Culprits';
import { FlameCanvas } from './FlameCanvas';
import { Legend } from './Legend';
import { srOnly } from './srOnly';
import { Toolbar } from './Toolbar';
import { Tooltip, relativeChange } from './Tooltip';
import { TopTable } from './TopTable';
import { useFlameColors } from './useFlameColors';

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
/** The side's name above each graph of the split view. */
const SPLIT_TITLE_HEIGHT = 20;
/** The gap between the graph and the call tree (theme.spacing(1)). */
const GAP = 8;

function parse(frame: DataFrame | undefined): { data?: FlameData; error?: string } {
  try {
    return frame ? { data: toFlameData(frame) } : {};
  } catch (e) {
    return { error: e instanceof Error ? e.message : String(e) };
  }
}

const message = (e: unknown) => (e instanceof Error ? e.message : String(e));

/** flamesOf keeps the flame graph frames of one normalisation. */
function flamesOf(series: DataFrame[], norm: Normalization): DataFrame[] {
  return series.filter((f) => isFlameFrame(f) && infoOf(f).normalize === norm);
}

/** An answer the panel asked for itself, or why it failed. */
type Answer<T> = { value?: T; error?: string };

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
  // The view (flameViewState.ts); below it, the answers of the panel's own queries.
  const [state, dispatch] = useReducer(reduce, undefined, () =>
    initialState(start, options.defaultSide, options.layout)
  );
  const {
    layout,
    side: sideName,
    inverted,
    collapsed,
    text,
    exact,
    picked,
    significantOnly,
    focus,
    zoomed,
    hover,
    menu,
  } = state;
  // The split view's graphs follow each other's zoom and pan through it.
  const [sync] = useState(() => new ViewSync());
  // The height of the verdict above the toolbar, and of the toolbar (it wraps in a narrow panel).
  const [verdictHeight, setVerdictHeight] = useState(0);
  const [toolbarHeight, setToolbarHeight] = useState(TOOLBAR_HEIGHT);
  const toolbarObserver = useRef<ResizeObserver | undefined>(undefined);
  const toolbarBox = useCallback((el: HTMLDivElement | null) => {
    toolbarObserver.current?.disconnect();
    if (!el) {
      return;
    }
    // Measured at once (in the commit, before the first paint: a graph drawn at
    // one height and redrawn at another would flicker), then on every resize.
    const measure = () => setToolbarHeight(Math.max(TOOLBAR_HEIGHT, el.offsetHeight));
    measure();
    if (typeof ResizeObserver !== 'undefined') {
      toolbarObserver.current = new ResizeObserver(measure);
      toolbarObserver.current.observe(el);
    }
  }, []);
  const showSandwich = useContext(SandwichContext);
  const filters = useContext(FiltersContext);
  // What of the start view needs the data: the normalisation, then the
  // drill-down, then the zoom, restored one step a render (each may query).
  const restoring = useRef<(PanelView & { zoomNode?: number }) | undefined>(
    start.normalize || start.drill || start.zoom ? { ...start } : undefined
  );
  const reported = useRef('');

  // The normalisation of the panel's own frames, and the other one once queried.
  const own = useMemo(() => {
    const first = series.find(isFlameFrame);
    return first ? infoOf(first).normalize : 'absolute';
  }, [series]);
  // The normalisation shown and the drill-down hold for the frames they were chosen on.
  const shown = chosenFor(state, series, own);
  const { norm, drill } = shown;
  const [queried, setQueried] = useState<{ series: DataFrame[]; norms: Map<Normalization, Answer<DataFrame[]>> }>();
  const [fns, setFns] = useState<{ series: DataFrame[]; norm: Normalization; answer: Answer<Functions> }>();
  const seq = useRef(0);

  const alt = queried?.series === series ? queried.norms.get(norm) : undefined;
  const source = useMemo(() => {
    const local = flamesOf(series, norm);
    return drill?.series ?? (local.length > 0 ? local : alt?.value);
  }, [series, norm, drill, alt]);
  const frames = useMemo(() => flameFramesByVariant(source ?? []), [source]);
  const variant = variantOf(inverted, collapsed);
  const { data, error } = useMemo(() => parse(frames.get(variant) ?? frames.get('normal')), [frames, variant]);
  // The verdict and the culprits of the drawn tree: the frame after it in its answer.
  // A culprits frame that breaks its contract is the panel's error, as a bad flame frame is.
  const { value: culprits, error: culpritsError } = useMemo((): Answer<CulpritsData> => {
    const f = culpritsFrameOf(frames.get(variant) ?? frames.get('normal'), [series, alt?.value, drill?.series]);
    try {
      return { value: f && parseCulprits(f) };
    } catch (e) {
      return { error: message(e) };
    }
  }, [frames, variant, series, alt, drill]);
  const sites = useMemo(() => culpritSites(data, culprits), [data, culprits]);
  const { greyNoise, scale, colorIndex, style } = useFlameColors(data, options, significantOnly, sites);
  const side = data ? sideOf(data, sideName) : undefined;

  // The top table: the functions frame among the panel's frames, else a
  // functions query of the panel's own, issued after the graph has painted.
  const fromSeries = useMemo(() => {
    const f = series.find(isFunctionsFrame);
    return f && parseFunctions(f);
  }, [series]);
  // The run totals a self delta is a share of: the root of the query's own tree.
  const totals = useMemo(() => {
    const whole = flamesOf(series, norm)[0] ?? alt?.value?.find(isFlameFrame);
    return whole && totalsOf(whole, norm);
  }, [series, norm, alt]);
  // The call tree takes the top table's place.
  const showTable = options.showTable && width >= TABLE_MIN_PANEL_WIDTH && layout === 'graph';
  const functions: Answer<Functions> | undefined =
    fromSeries && norm === own
      ? { value: fromSeries }
      : fns?.series === series && fns.norm === norm
        ? fns.answer
        : undefined;
  const wantFunctions = showTable && !functions && Boolean(querier) && Boolean(data);
  useEffect(() => {
    if (!wantFunctions || !querier) {
      return;
    }
    let live = true;
    const id = setTimeout(() => {
      querier({ queryType: 'functions', normalize: norm, variants: false, focus: undefined })
        .then((res) => {
          const f = res.find(isFunctionsFrame);
          return f ? { value: parseFunctions(f) } : { error: strings.panel.noData };
        })
        .catch((e) => ({ error: message(e) }))
        .then((answer) => live && setFns({ series, norm, answer }));
    });
    return () => {
      live = false;
      clearTimeout(id);
    };
  }, [wantFunctions, querier, series, norm]);
  // The table waits for the graph's first paint (the canvas draws in the
  // first animation frame): on a page's first load it would delay it.
  const [tableDue, setTableDue] = useState(false);
  useEffect(() => {
    if (tableDue) {
      return;
    }
    let timer: ReturnType<typeof setTimeout> | undefined;
    const frame = requestAnimationFrame(() => (timer = setTimeout(() => setTableDue(true))));
    return () => {
      cancelAnimationFrame(frame);
      clearTimeout(timer);
    };
  }, [tableDue]);
  const rows = functions?.value;
  const table = useMemo(() => rows && withSelfDeltas(rows, totals), [rows, totals]);

  const found = useMemo(() => (data ? search(data, { text, exact }) : undefined), [data, text, exact]);
  const highlight = useMemo(() => {
    const node = data && picked ? nodeAtPath(data, picked) : -1;
    return node > 0 ? pathMatch(data!, node) : undefined;
  }, [data, picked]);

  const haveNorm = (v: Normalization) =>
    flamesOf(series, v).length > 0 || Boolean(queried?.series === series && queried.norms.get(v)?.value);
  const onNormalize = (v: Normalization) => {
    keepNormalization(v);
    dispatch({ type: 'normalize', of: series, norm: v });
    if (haveNorm(v) || !querier) {
      return;
    }
    const norms = new Map(queried?.series === series ? queried.norms : []);
    querier({ normalize: v, variants: true, focus: undefined })
      .then((res): Answer<DataFrame[]> => ({ value: res }))
      .catch((e): Answer<DataFrame[]> => ({ error: message(e) }))
      .then((answer) => setQueried({ series, norms: new Map(norms).set(v, answer) }));
  };
  const canNormalize = Boolean(querier) || (haveNorm('absolute') && haveNorm('relative'));

  // drillTo queries a subtree at full detail (path [] returns to the panel's frames).
  const drillTo = (path: string[]) => {
    const id = ++seq.current;
    dispatch({ type: 'drill', of: series, norm, path: querier ? path : [] });
    if (path.length === 0 || !querier) {
      return;
    }
    querier({ focus: path, normalize: norm, variants: false, inverted, collapseSystem: collapsed })
      .then((res): Drill => ({ path, series: res }))
      .catch((e): Drill => ({ path, error: message(e) }))
      .then((d) => {
        if (seq.current !== id) {
          return;
        }
        const node = d.series?.length ? nodeAtPath(toFlameData(d.series[0]), path) : -1;
        dispatch({ type: 'drilled', of: series, norm, drill: d, node });
      });
  };

  // Restore the host's start view, a step a render; no step waits on the
  // user, so an effect on every render advances it as answers arrive; the
  // ref ends it, so a zoom cannot loop.
  useEffect(() => {
    const r = restoring.current;
    if (!r || !data || drill?.loading) {
      return;
    }
    if (r.normalize) {
      const v = r.normalize;
      r.normalize = undefined;
      if (v !== norm && canNormalize) {
        onNormalize(v);
        return;
      }
    }
    if (r.drill) {
      const path = r.drill;
      r.drill = undefined;
      if (querier && path.length > 0) {
        drillTo(path);
        return;
      }
    }
    if (r.zoom) {
      const node = nodeAtPath(data, r.zoom);
      r.zoom = undefined;
      if (node > 0) {
        r.zoomNode = node;
        dispatch({ type: 'zoom', node });
        return;
      }
    }
    // Done once the canvas has zoomed: reporting earlier would write a view
    // without the zoom into the URL (and a history entry).
    if (r.zoomNode === undefined || zoomed === r.zoomNode) {
      restoring.current = undefined;
    }
  });
  // Report the view to the host once restored, whenever it changes.
  const view = panelView(state, {
    norm,
    own,
    drill: drill?.path,
    zoom: data && zoomed > 0 && zoomed < data.n ? nodePath(data, zoomed) : undefined,
  });
  useEffect(() => {
    const json = JSON.stringify(view);
    if (host && !restoring.current && json !== reported.current) {
      reported.current = json;
      host.onChange(view);
    }
  });

  if (!source && alt === undefined && !drill) {
    return <Alert title={strings.panel.loading} severity="info" data-testid={selectors.panel.loading} />;
  }
  if (error || alt?.error || culpritsError || !data || !side) {
    return (
      <Alert title={strings.panel.badFrame} severity="error" data-testid={selectors.panel.error}>
        {error ?? alt?.error ?? culpritsError}
      </Alert>
    );
  }

  const showGraph = layout !== 'tree';
  // Base beside head: a diff's two sides, one zoom, pan and hover.
  const split = layout === 'split' && Boolean(data.head);
  const half = Math.max(50, Math.floor((width - GAP) / 2));
  const graphWidth = Math.max(
    50,
    showTable ? Math.floor(width * 0.62) : layout === 'both' ? Math.floor(width * GRAPH_SHARE) : width
  );
  const treeWidth = layout === 'both' ? Math.max(50, width - graphWidth - GAP) : width;
  const above = toolbarHeight + (culprits ? verdictHeight : 0);
  const graphHeight = Math.max(
    ROW_HEIGHT,
    height - above - (data.head ? LEGEND_HEIGHT : 0) - (drill ? BREADCRUMB_HEIGHT : 0)
  );

  const focusLabel = (label: string) => {
    const idx = data.labels.indexOf(label);
    let best = -1;
    for (let i = 0; i < data.n; i++) {
      if (data.labelIdx[i] === idx && (best < 0 || side.total[i] > side.total[best])) {
        best = i;
      }
    }
    dispatch({ type: 'row', label, node: best });
  };
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
  // The node menu offers a function's callers and callees (not the root's, not an `other` node's).
  const onMenu =
    showSandwich &&
    ((node: number, x: number, y: number) =>
      node > 0 && !isOther(data, node) && dispatch({ type: 'menu', menu: { node, x, y } }));
  const menuLabel = menu && menu.node < data.n ? data.labels[data.labelIdx[menu.node]] : undefined;
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
        <Toolbar
          layout={layout}
          onLayout={(l) => dispatch({ type: 'layout', layout: l })}
          isDiff={Boolean(data.head)}
          side={sideName}
          onSide={(v) => dispatch({ type: 'side', side: v })}
          inverted={inverted}
          canInvert={frames.has(variantOf(!inverted, collapsed))}
          onInverted={(v) => dispatch({ type: 'inverted', inverted: v })}
          collapsed={collapsed}
          canCollapse={frames.has(variantOf(inverted, !collapsed))}
          onCollapsed={(v) => dispatch({ type: 'collapsed', collapsed: v })}
          search={text}
          onSearch={(t) => dispatch({ type: 'search', text: t })}
          matches={found?.count}
          onReset={() => dispatch({ type: 'reset' })}
          hasStats={Boolean(data.stats)}
          significantOnly={significantOnly}
          onSignificantOnly={(v) => dispatch({ type: 'significantOnly', significantOnly: v })}
          normalize={norm}
          onNormalize={canNormalize ? onNormalize : undefined}
          onFullDetail={querier && zoomed > 0 ? () => drillTo(focusPath(data, zoomed)) : undefined}
          sandwichOf={showSandwich && exact && text ? text : undefined}
          onSandwich={showSandwich}
          filtersOpen={filters?.open}
          onFilters={filters?.toggle}
        />
      </div>
      {drill && <Breadcrumb drill={drill} onPath={drillTo} />}
      <div className={styles.main}>
        <div className={styles.graph} style={{ width: showGraph ? graphWidth : treeWidth }}>
          {split ? (
            <div className={styles.split}>
              {(['base', 'head'] as const).map((name, k) => (
                <div key={name}>
                  <div className={styles.splitTitle}>
                    {name === 'base' ? strings.panel.splitBase : strings.panel.splitHead}
                  </div>
                  <FlameCanvas
                    data={data}
                    side={sideOf(data, name)}
                    colorIndex={colorIndex}
                    match={highlight ?? found?.match}
                    style={style}
                    width={half}
                    height={graphHeight - SPLIT_TITLE_HEIGHT}
                    rowHeight={ROW_HEIGHT}
                    focus={focus}
                    resetSeq={state.resetSeq}
                    onHover={(node, x, y) =>
                      (node >= 0 || hover.node >= 0) &&
                      dispatch({ type: 'hover', node, x: x + k * (half + GAP), y: y + SPLIT_TITLE_HEIGHT })
                    }
                    // A zoom in either graph is the zoom of both.
                    onZoomed={(node) =>
                      node !== zoomed && dispatch(node >= 0 ? { type: 'select', node } : { type: 'zoomed', node })
                    }
                    onDrill={querier ? (node) => drillTo(focusPath(data, node)) : undefined}
                    onMenu={onMenu || undefined}
                    testId={name === 'base' ? selectors.panel.splitBase : selectors.panel.splitHead}
                    label={strings.panel.splitLabel(name === 'base' ? strings.panel.base : strings.panel.head)}
                    sync={sync}
                    outline={hovered}
                  />
                </div>
              ))}
            </div>
          ) : showGraph ? (
            <FlameCanvas
              data={data}
              side={side}
              colorIndex={colorIndex}
              match={highlight ?? found?.match}
              style={style}
              width={graphWidth}
              height={graphHeight}
              rowHeight={ROW_HEIGHT}
              focus={focus}
              resetSeq={state.resetSeq}
              // The canvas reports from its layout effects: an unchanged report
              // dispatches nothing (React renders for any dispatch, unlike a
              // useState set to its value, and the reports would loop).
              onHover={(node, x, y) => (node >= 0 || hover.node >= 0) && dispatch({ type: 'hover', node, x, y })}
              onZoomed={(node) => node !== zoomed && dispatch({ type: 'zoomed', node })}
              onDrill={querier ? (node) => drillTo(focusPath(data, node)) : undefined}
              onMenu={onMenu || undefined}
            />
          ) : (
            calltree(treeWidth, graphHeight)
          )}
          {menu && menuLabel && showSandwich && (
            <ContextMenu
              x={menu.x}
              y={menu.y}
              focusOnOpen
              onClose={() => dispatch({ type: 'menu' })}
              renderHeader={() => <span data-testid={selectors.panel.nodeMenu}>{menuLabel}</span>}
              renderMenuItems={() => (
                <Menu.Item
                  label={strings.panel.around.sandwich(menuLabel)}
                  icon="exchange-alt"
                  onClick={() => {
                    dispatch({ type: 'menu' });
                    showSandwich(menuLabel);
                  }}
                />
              )}
            />
          )}
          {hovered >= 0 && (
            <Tooltip
              data={data}
              node={hovered}
              side={sideName}
              x={hover.x}
              y={hover.y}
              palette={options.palette}
              culprit={sites.get(hovered)}
            />
          )}
          <div className={styles.srOnly} aria-live="polite" data-testid={selectors.panel.live}>
            {hovered >= 0 &&
              `${data.labels[data.labelIdx[hovered]]}${
                data.head ? `, ${relativeChange(data.head.total[hovered], data.base.total[hovered])}` : ''
              }`}
          </div>
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

const getStyles = (theme: GrafanaTheme2) => ({
  root: css({ display: 'flex', flexDirection: 'column', height: '100%', color: theme.colors.text.primary }),
  main: css({ display: 'flex', gap: theme.spacing(1), minHeight: 0 }),
  graph: css({ position: 'relative', flex: 'none' }),
  split: css({ display: 'flex', gap: GAP }),
  splitTitle: css({
    height: SPLIT_TITLE_HEIGHT,
    fontSize: theme.typography.bodySmall.fontSize,
    fontWeight: theme.typography.fontWeightMedium,
  }),
  srOnly: css(srOnly),
});
