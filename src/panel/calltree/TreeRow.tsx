import { cx } from '@emotion/css';
import React from 'react';

import { selectors } from '../../selectors';
import { strings } from '../../strings';
import { TreeColumn } from './model';
import { TREE_ROW_HEIGHT, TreeStyles } from './treeStyles';

/** Indentation a level, up to MAX_INDENT levels (deeper rows say their level to a screen reader, and in aria-level). */
const INDENT = 10;
const MAX_INDENT = 12;
const t = strings.panel.tree;

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
  styles: TreeStyles;
}

/** TreeRow is one row of the treegrid; memoised, so a scroll renders only the rows it brings into sight. */
export const TreeRow = React.memo(function TreeRow(p: RowProps) {
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
