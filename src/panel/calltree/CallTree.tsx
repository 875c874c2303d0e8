import { css, cx } from '@emotion/css';
import React, { useCallback, useLayoutEffect, useMemo, useRef, useState } from 'react';

import { GrafanaTheme2 } from '@grafana/data';
import { useStyles2 } from '@grafana/ui';

import { selectors } from '../../selectors';
import { strings } from '../../strings';
import { formatP, formatShare, formatValue } from '../format';
import { FlameData } from '../model/flameData';
import { NodeColors } from '../render/colors';
import {
  TreeColumn,
  TreeModel,
  TreeSort,
  TreeState,
  defaultSort,
  flatten,
  keepOf,
  parentsOf,
  treeKey,
  withAncestors,
} from './model';

export interface CallTreeProps {
  data: FlameData;
  /** The graph's colours: each row's swatch is its node's colour (grey for noise, as drawn). */
  colorIndex: NodeColors;
  colors: string[];
  /** Noise is grey: rows the statistics do not call significant (but culprits) are greyed. */
  greyNoise: boolean;
  /** The culprits' nodes, marked. */
  culprits: ReadonlyMap<number, { kind: string }>;
  /** The search's matches: the tree keeps them and their callers. */
  match?: Uint8Array;
  /** The graph's zoomed node (-1: none): the tree selects it and shows its row. */
  selected: number;
  /** A row chosen (click, Enter): the graph zooms onto it. */
  onSelect: (node: number) => void;
  width: number;
  height: number;
}

export const TREE_ROW_HEIGHT = 22;
/** Indentation a level, up to MAX_INDENT levels (deeper rows say their level to a screen reader, and in aria-level). */
const INDENT = 10;
const MAX_INDENT = 12;
const SCROLLBAR = 14;
/** Rows rendered above and below the visible ones, so a fast scroll does not show blanks. */
const OVERSCAN = 6;
/** A search opens the callers of at most this many matches (the rest stay one Right away). */
const OPEN_MATCHES = 2000;
const t = strings.panel.tree;

interface Column {
  key: TreeColumn;
  label: string;
}

/** Widths of the columns: the function takes what the figures leave, at least NAME_MIN. */
const NAME_MIN = 180;
const NUM_WIDTH = 76;
const CI_WIDTH = 128;
/** The columns a narrow tree leaves out first: the selfs, then the interval (the tooltip and a wider tree show them). */
const DROP_ORDER: TreeColumn[] = ['baseSelf', 'headSelf', 'ci'];
const widthOf = (c: Column) => (c.key === 'name' ? NAME_MIN : c.key === 'ci' ? CI_WIDTH : NUM_WIDTH);

/** fit leaves columns out, in DROP_ORDER, until the rest fit width. */
function fit(cols: Column[], width: number): Column[] {
  let out = cols;
  for (const key of DROP_ORDER) {
    if (out.reduce((w, c) => w + widthOf(c), 0) <= width) {
      break;
    }
    out = out.filter((c) => c.key !== key);
  }
  return out;
}

function columnsOf(data: FlameData): Column[] {
  if (!data.head) {
    return [
      { key: 'name', label: t.function },
      { key: 'headSelf', label: t.self },
      { key: 'headTotal', label: t.total },
    ];
  }
  const cols: Column[] = [
    { key: 'name', label: t.function },
    { key: 'headSelf', label: t.headSelf },
    { key: 'headTotal', label: t.headTotal },
    { key: 'baseSelf', label: t.baseSelf },
    { key: 'baseTotal', label: t.baseTotal },
    { key: 'delta', label: t.delta },
  ];
  if (data.stats) {
    cols.push({ key: 'ci', label: t.ci }, { key: 'q', label: t.q });
  }
  return cols;
}

/** The tree's state, and what it was made for: the frame and search (of), the graph's last zoomed node (seen). */
type Held = TreeState & { of: unknown[]; seen: number };

/** opened is the tree's first state: the top nodes open, or the callers of a search's matches. */
function opened(data: FlameData, parent: Int32Array, match?: Uint8Array): Set<number> {
  const out = new Set<number>();
  for (let i = 0; i < data.n; i = data.end[i]) {
    out.add(i);
  }
  if (match) {
    let left = OPEN_MATCHES;
    for (let i = 0; i < data.n && left > 0; i++) {
      if (match[i]) {
        left--;
        for (let p = parent[i]; p >= 0 && !out.has(p); p = parent[p]) {
          out.add(p);
        }
      }
    }
  }
  return out;
}

/**
 * CallTree is the flame graph's frame as a tree table (the WAI-ARIA
 * treegrid): one row per call path, its self and total on each side, the
 * change with its interval and q-value. Only the rows in sight are in the
 * DOM; the keyboard walks the rows (model.ts's treeKey), Enter or a click
 * zooms the graph onto a row's node, and a zoom in the graph selects it here.
 */
export function CallTree(p: CallTreeProps) {
  const { data, width, height } = p;
  const styles = useStyles2(getStyles);
  const [sort, setSort] = useState<TreeSort>(() => defaultSort(data));
  const parent = useMemo(() => parentsOf(data), [data]);
  const keep = useMemo(() => (p.match ? keepOf(data, p.match) : undefined), [data, p.match]);
  const model = useMemo(() => new TreeModel(data, sort, keep), [data, sort, keep]);
  // The keyboard's state holds for the frame and search it was made on (of):
  // new ones start afresh. A node zoomed onto in the graph (seen, the last
  // one) opens its callers and takes the focus; its row comes into sight.
  const { selected } = p;
  const shown = (i: number) => i >= 0 && i < data.n && (!keep || keep[i] === 1);
  const fresh = (): Held => {
    const expanded = opened(data, parent, p.match);
    return shown(selected)
      ? { of: [data, p.match], seen: selected, focused: selected, expanded: withAncestors(expanded, parent, selected) }
      : { of: [data, p.match], seen: selected, focused: -1, expanded };
  };
  const [tree, setTree] = useState<Held>(fresh);
  let state = tree;
  if (tree.of[0] !== data || tree.of[1] !== p.match) {
    state = fresh();
  } else if (tree.seen !== selected) {
    state = shown(selected)
      ? { ...tree, seen: selected, focused: selected, expanded: withAncestors(tree.expanded, parent, selected) }
      : { ...tree, seen: selected };
  }
  if (state !== tree) {
    setTree(state);
  }
  const update = (s: TreeState) => s !== state && setTree({ ...s, of: state.of, seen: state.seen });
  const rows = useMemo(() => flatten(model, state.expanded), [model, state.expanded]);

  const scroller = useRef<HTMLDivElement>(null);
  const grid = useRef<HTMLDivElement>(null);
  const [scrollTop, setScrollTop] = useState(0);
  const bodyHeight = Math.max(TREE_ROW_HEIGHT, height - TREE_ROW_HEIGHT);
  // Whether the focus is in the tree: the focused row then takes the DOM focus as it moves.
  const inside = useRef(false);

  // reveal scrolls a row into sight.
  const reveal = (row: number) => {
    const el = scroller.current;
    if (!el || row < 0) {
      return;
    }
    const top = row * TREE_ROW_HEIGHT;
    if (top < el.scrollTop) {
      el.scrollTop = top;
    } else if (top + TREE_ROW_HEIGHT > el.scrollTop + bodyHeight) {
      el.scrollTop = top + TREE_ROW_HEIGHT - bodyHeight;
    }
    setScrollTop(el.scrollTop);
  };

  const focusedRow = state.focused >= 0 ? rows.rowOf(state.focused) : -1;
  // The focused row into sight (after a key, a zoom in the graph), and the DOM focus onto it while in the tree.
  useLayoutEffect(() => {
    reveal(focusedRow);
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [state.focused, rows]);
  useLayoutEffect(() => {
    if (inside.current && focusedRow >= 0) {
      grid.current?.querySelector<HTMLElement>(`[data-node="${state.focused}"]`)?.focus({ preventScroll: true });
    }
  });

  const onKeyDown = (e: React.KeyboardEvent) => {
    if (e.target instanceof HTMLButtonElement) {
      return; // a header's sort button keeps its own keys
    }
    if (e.key === 'Enter') {
      e.preventDefault();
      if (state.focused >= 0) {
        p.onSelect(state.focused);
      }
      return;
    }
    const next = treeKey(state, e.key, rows, model, parent);
    if (next !== state) {
      e.preventDefault();
      update(next);
    }
  };

  const toggle = (i: number) => {
    const expanded = new Set(state.expanded);
    if (!expanded.delete(i)) {
      expanded.add(i);
    }
    update({ focused: i, expanded });
  };

  // The room for the columns: the body's scroll bar takes its share.
  const columns = useMemo(() => fit(columnsOf(data), width - SCROLLBAR), [data, width]);
  const template = columns.map((c) => (c.key === 'name' ? `minmax(${NAME_MIN}px, 1fr)` : `${widthOf(c)}px`)).join(' ');
  const first = Math.max(0, Math.floor(scrollTop / TREE_ROW_HEIGHT) - OVERSCAN);
  const last = Math.min(rows.count, Math.ceil((scrollTop + bodyHeight) / TREE_ROW_HEIGHT) + OVERSCAN);
  const stats = data.stats;
  const cellsOf = useMemo(() => figuresOf(data, columns), [data, columns]);
  const keys = useMemo(() => columns.slice(1).map((c) => c.key), [columns]);
  // The rows' handlers, stable (a row renders again only when what it shows changes).
  const handlers = useRef({ row: (_: number) => {}, toggle: (_: number) => {} });
  useLayoutEffect(() => {
    handlers.current = {
      row: (i) => {
        update({ ...state, focused: i });
        p.onSelect(i);
      },
      toggle,
    };
  });
  const onRow = useCallback((i: number) => handlers.current.row(i), []);
  const onToggle = useCallback((i: number) => handlers.current.toggle(i), []);

  const body: React.ReactNode[] = [];
  for (let r = first; r < last; r++) {
    const i = rows.node[r];
    const culprit = p.culprits.get(i);
    body.push(
      <TreeRow
        key={i}
        i={i}
        r={r}
        label={data.labels[data.labelIdx[i]]}
        level={data.level[i]}
        setSize={rows.setSize[r]}
        posInSet={rows.posInSet[r]}
        expanded={model.hasChildren(i) ? state.expanded.has(i) : undefined}
        selected={i === selected}
        tabbable={i === state.focused || (state.focused < 0 && r === 0)}
        noise={p.greyNoise && stats?.significant[i] !== 1 && !culprit}
        color={p.colors[p.colorIndex.keyOf(i)]}
        match={Boolean(p.match?.[i])}
        culprit={culprit?.kind}
        only={data.head ? (data.base.total[i] === 0 ? 'new' : data.head.total[i] === 0 ? 'removed' : '') : ''}
        template={template}
        keys={keys}
        cells={cellsOf}
        onRow={onRow}
        onToggle={onToggle}
        styles={styles}
      />
    );
  }

  return (
    <div
      ref={grid}
      role="treegrid"
      aria-label={t.caption}
      aria-rowcount={rows.count + 1}
      aria-colcount={columns.length}
      data-testid={selectors.panel.tree}
      data-rows={rows.count}
      className={styles.wrap}
      style={{ width, height }}
      onKeyDown={onKeyDown}
      onFocus={() => (inside.current = true)}
      onBlur={(e) => {
        if (!e.currentTarget.contains(e.relatedTarget as Node | null)) {
          inside.current = false;
        }
      }}
    >
      <div role="row" aria-rowindex={1} className={styles.header} style={{ gridTemplateColumns: template }}>
        {columns.map((c) => (
          <div
            role="columnheader"
            key={c.key}
            aria-sort={sort.column === c.key ? (sort.desc ? 'descending' : 'ascending') : 'none'}
            className={c.key === 'name' ? styles.nameHead : styles.numHead}
          >
            <button
              className={styles.sort}
              data-testid={selectors.panel.treeSort}
              data-column={c.key}
              aria-label={t.sortBy(c.label)}
              onClick={() => setSort((s) => ({ column: c.key, desc: s.column === c.key ? !s.desc : c.key !== 'name' }))}
            >
              {c.label}
              {sort.column === c.key ? (sort.desc ? ' ▼' : ' ▲') : ''}
            </button>
          </div>
        ))}
      </div>
      <div
        ref={scroller}
        className={styles.scroller}
        style={{ height: bodyHeight }}
        onScroll={(e) => setScrollTop(e.currentTarget.scrollTop)}
      >
        <div role="rowgroup" style={{ height: rows.count * TREE_ROW_HEIGHT, position: 'relative' }}>
          {body}
        </div>
      </div>
    </div>
  );
}

/** figuresOf prints a row's figures, column by column (all but the function). */
function figuresOf(data: FlameData, columns: Column[]): (i: number) => string[] {
  const head = data.head ?? data.base;
  const stats = data.stats;
  const cell = (key: TreeColumn, i: number): string => {
    switch (key) {
      case 'headSelf':
        return formatValue(head.self[i], data.unit);
      case 'headTotal':
        return formatValue(head.total[i], data.unit);
      case 'baseSelf':
        return formatValue(data.base.self[i], data.unit);
      case 'baseTotal':
        return formatValue(data.base.total[i], data.unit);
      case 'delta':
        return formatShare(data.delta[i], true);
      case 'ci': {
        const lo = stats?.deltaLow[i] ?? NaN;
        const hi = stats?.deltaHigh[i] ?? NaN;
        return Number.isFinite(lo) && Number.isFinite(hi)
          ? `${formatShare(lo, true)} .. ${formatShare(hi, true)}`
          : '–';
      }
      case 'q':
        return formatP(stats?.qValue[i] ?? NaN);
      default:
        return '';
    }
  };

  return (i) => columns.slice(1).map((c) => cell(c.key, i));
}

interface RowProps {
  i: number;
  r: number;
  label: string;
  level: number;
  setSize: number;
  posInSet: number;
  /** Undefined for a row without children. */
  expanded?: boolean;
  selected: boolean;
  tabbable: boolean;
  noise: boolean;
  color: string;
  match: boolean;
  culprit?: string;
  only: '' | 'new' | 'removed';
  template: string;
  /** The figures' columns, and their text of node i. */
  keys: TreeColumn[];
  cells: (i: number) => string[];
  onRow: (i: number) => void;
  onToggle: (i: number) => void;
  styles: ReturnType<typeof getStyles>;
}

/** TreeRow is one row of the treegrid; memoised, so a scroll renders only the rows it brings into sight. */
const TreeRow = React.memo(function TreeRow(p: RowProps) {
  const { styles, i } = p;
  return (
    <div
      role="row"
      data-testid={selectors.panel.treeRow}
      data-node={i}
      data-noise={p.noise || undefined}
      aria-rowindex={p.r + 2}
      aria-level={p.level + 1}
      aria-setsize={p.setSize}
      aria-posinset={p.posInSet}
      aria-expanded={p.expanded}
      aria-selected={p.selected}
      tabIndex={p.tabbable ? 0 : -1}
      className={cx(styles.row, p.selected && styles.selected, p.noise && styles.noise)}
      style={{ top: p.r * TREE_ROW_HEIGHT, gridTemplateColumns: p.template }}
      onClick={() => p.onRow(i)}
    >
      <div
        role="gridcell"
        className={styles.name}
        style={{ paddingLeft: Math.min(p.level, MAX_INDENT) * INDENT }}
        title={p.label}
      >
        <span
          className={styles.twisty}
          aria-hidden
          onClick={(e) => {
            e.stopPropagation();
            if (p.expanded !== undefined) {
              p.onToggle(i);
            }
          }}
        >
          {p.expanded === undefined ? '' : p.expanded ? '▾' : '▸'}
        </span>
        <span className={styles.swatch} style={{ background: p.color }} aria-hidden />
        <span className={cx(styles.label, p.match && styles.match)}>{p.label}</span>
        {p.culprit && (
          <span className={styles.mark} data-testid={selectors.panel.treeCulprit} title={t.culpritHelp(p.culprit)}>
            {t.culprit}
          </span>
        )}
        {p.only && (
          <span className={styles.mark} title={p.only === 'new' ? t.newHelp : t.removedHelp}>
            {p.only === 'new' ? t.new : t.removed}
          </span>
        )}
      </div>
      {p.cells(i).map((text, k) => (
        <div role="gridcell" key={k} data-column={p.keys[k]} className={styles.num}>
          {text}
        </div>
      ))}
    </div>
  );
});

const getStyles = (theme: GrafanaTheme2) => ({
  wrap: css({
    display: 'flex',
    flexDirection: 'column',
    fontSize: theme.typography.bodySmall.fontSize,
    minWidth: 0,
  }),
  header: css({
    display: 'grid',
    height: TREE_ROW_HEIGHT,
    alignItems: 'center',
    borderBottom: `1px solid ${theme.colors.border.weak}`,
    paddingRight: SCROLLBAR, // the body's scroll bar
  }),
  nameHead: css({ textAlign: 'left', padding: theme.spacing(0, 0.5) }),
  numHead: css({ textAlign: 'right', padding: theme.spacing(0, 0.5) }),
  sort: css({
    background: 'none',
    border: 'none',
    color: 'inherit',
    font: 'inherit',
    fontWeight: theme.typography.fontWeightMedium,
    cursor: 'pointer',
    padding: 0,
    whiteSpace: 'nowrap',
  }),
  scroller: css({ overflowY: 'auto', overflowX: 'hidden', scrollbarGutter: 'stable' }),
  row: css({
    position: 'absolute',
    left: 0,
    right: 0,
    height: TREE_ROW_HEIGHT,
    display: 'grid',
    alignItems: 'center',
    cursor: 'pointer',
    whiteSpace: 'nowrap',
    '&:hover': { background: theme.colors.action.hover },
    '&:focus': { outline: `2px solid ${theme.colors.primary.main}`, outlineOffset: -2 },
  }),
  selected: css({ background: theme.colors.action.selected }),
  noise: css({ color: theme.colors.text.secondary }),
  name: css({ display: 'flex', alignItems: 'center', gap: 4, minWidth: 0, overflow: 'hidden' }),
  twisty: css({ width: 12, flex: 'none', textAlign: 'center' }),
  swatch: css({ width: 10, height: 10, flex: 'none', borderRadius: 2 }),
  label: css({
    flex: '1 1 auto',
    minWidth: 40,
    overflow: 'hidden',
    textOverflow: 'ellipsis',
    fontFamily: theme.typography.fontFamilyMonospace,
  }),
  match: css({ fontWeight: theme.typography.fontWeightBold }),
  mark: css({
    flex: 'none',
    fontSize: 10,
    padding: '0 4px',
    borderRadius: 3,
    border: `1px solid ${theme.colors.border.medium}`,
  }),
  num: css({ textAlign: 'right', padding: theme.spacing(0, 0.5), overflow: 'hidden', textOverflow: 'ellipsis' }),
});
