import React, { useCallback, useLayoutEffect, useMemo, useRef, useState } from 'react';

import { useStyles2 } from '@grafana/ui';

import { selectors } from '../../selectors';
import { strings } from '../../strings';
import { FlameData } from '../model/flameData';
import { NodeColors } from '../render/colors';
import { NAME_MIN, columnsOf, figuresOf, fit, widthOf } from './columns';
import { TreeModel, TreeSort, defaultSort, flatten, keepOf, parentsOf, treeKey } from './model';
import { TreeHeader } from './TreeHeader';
import { TreeRow } from './TreeRow';
import { SCROLLBAR, TREE_ROW_HEIGHT, getTreeStyles } from './treeStyles';
import { useTreeState } from './useTreeState';

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

/** Rows rendered above and below the visible ones, so a fast scroll does not show blanks. */
const OVERSCAN = 6;
const t = strings.panel.tree;

/**
 * CallTree is the flame graph's frame as a tree table (the WAI-ARIA
 * treegrid): one row per call path, its self and total on each side, the
 * change with its interval and q-value. Only the rows in sight are in the
 * DOM; the keyboard walks the rows (model.ts's treeKey), Enter or a click
 * zooms the graph onto a row's node, and a zoom in the graph selects it here.
 */
export function CallTree(p: CallTreeProps) {
  const { data, width, height } = p;
  const styles = useStyles2(getTreeStyles);
  const [sort, setSort] = useState<TreeSort>(() => defaultSort(data));
  const parent = useMemo(() => parentsOf(data), [data]);
  const keep = useMemo(() => (p.match ? keepOf(data, p.match) : undefined), [data, p.match]);
  const model = useMemo(() => new TreeModel(data, sort, keep), [data, sort, keep]);
  const { selected } = p;
  const { state, update } = useTreeState(data, parent, p.match, keep, selected);
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
      <TreeHeader columns={columns} template={template} sort={sort} setSort={setSort} styles={styles} />
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
