import React, { Dispatch, SetStateAction } from 'react';

import { selectors } from '../../selectors';
import { strings } from '../../strings';
import { Column } from './columns';
import { TreeSort } from './model';
import { TreeStyles } from './treeStyles';

const t = strings.panel.tree;

interface Props {
  columns: Column[];
  /** The grid's column template, the rows'. */
  template: string;
  sort: TreeSort;
  setSort: Dispatch<SetStateAction<TreeSort>>;
  styles: TreeStyles;
}

/**
 * TreeHeader is the tree's header row: a sort button a column. A click sorts
 * by the column, again the other way (figures start descending, names ascending).
 */
export function TreeHeader({ columns, template, sort, setSort, styles }: Props) {
  return (
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
  );
}
