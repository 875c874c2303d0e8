import { css, cx } from '@emotion/css';
import React, { useMemo, useState } from 'react';

import { GrafanaTheme2 } from '@grafana/data';
import { useStyles2 } from '@grafana/ui';

import { selectors } from '../../selectors';
import { strings } from '../../strings';
import { formatP, formatShare, formatValue } from '../format';
import { Functions, SortKey, sortRows } from '../model/functions';
import { onRowKey } from './rowKeys';

interface Props {
  functions: Functions;
  selected?: string;
  onSelect: (name: string) => void;
  height: number;
}

/** Rows beyond this are not rendered: the table is for the top of the list. */
const MAX_ROWS = 300;
const t = strings.panel.table;

/**
 * TopTable lists the rows of the `functions` answer, in the engine's order
 * until a header sorts them (a diff by its total's or its self's change); a click (or Enter) on a row focuses the function
 * in the graph. Rows are reachable by Tab and the arrow keys.
 */
export function TopTable({ functions, selected, onSelect, height }: Props) {
  const styles = useStyles2(getStyles);
  const { diff, stats, unit } = functions;
  const [sort, setSort] = useState<{ key: SortKey; desc: boolean }>({ key: 'rank', desc: true });
  const rows = useMemo(() => sortRows(functions.rows, sort.key, sort.desc).slice(0, MAX_ROWS), [functions, sort]);

  const header = (key: SortKey, label: string) => (
    <th className={styles.th} aria-sort={sort.key === key ? (sort.desc ? 'descending' : 'ascending') : 'none'}>
      <button
        className={styles.sort}
        aria-label={t.sortBy(label)}
        onClick={() => setSort((s) => ({ key, desc: s.key === key ? !s.desc : true }))}
      >
        {label}
        {sort.key === key ? (sort.desc ? ' ▼' : ' ▲') : ''}
      </button>
    </th>
  );
  return (
    <div className={styles.wrap} style={{ maxHeight: height }}>
      <table className={styles.table} data-testid={selectors.panel.table} aria-label={t.caption}>
        <thead>
          <tr>
            {header('name', t.function)}
            {header('self', t.self)}
            {header('total', diff ? t.headTotal : t.total)}
            {diff && <th className={styles.th}>{t.baseTotal}</th>}
            {diff && header('delta', t.delta)}
            {diff && header('selfDelta', t.selfDelta)}
            {stats && header('significance', t.q)}
          </tr>
        </thead>
        <tbody>
          {rows.map((r) => (
            <tr
              key={r.name}
              data-testid={selectors.panel.tableRow}
              data-significant={r.significant === null ? undefined : String(r.significant)}
              className={cx(
                styles.row,
                r.name === selected && styles.selected,
                r.significant === false && styles.noise
              )}
              tabIndex={0}
              aria-selected={r.name === selected}
              onClick={() => onSelect(r.name)}
              onKeyDown={(e) => onRowKey(e, () => onSelect(r.name))}
            >
              <td className={styles.label} title={r.name}>
                {r.name}
              </td>
              <td>{formatValue(r.selfHead, unit)}</td>
              <td>{formatValue(r.totalHead, unit)}</td>
              {diff && <td>{formatValue(r.totalBase, unit)}</td>}
              {diff && <td>{formatShare(r.delta, true)}</td>}
              {diff && <td>{formatShare(r.selfDelta, true)}</td>}
              {stats && <td>{formatP(r.qValue)}</td>}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

const getStyles = (theme: GrafanaTheme2) => ({
  // The table takes the room beside the graph, never more: the function
  // column gives way (ellipsis), the figures keep their width.
  wrap: css({ overflow: 'auto', flex: 1, minWidth: 0 }),
  table: css({
    width: '100%',
    fontSize: theme.typography.bodySmall.fontSize,
    borderCollapse: 'collapse',
    // Narrow padding: seven columns fit beside the graph at 1280 px.
    td: { padding: theme.spacing(0.25, 0.5), whiteSpace: 'nowrap', textAlign: 'right' },
  }),
  th: css({
    position: 'sticky',
    top: 0,
    background: theme.colors.background.primary,
    padding: theme.spacing(0.5, 0.5),
    textAlign: 'right',
  }),
  sort: css({
    background: 'none',
    border: 'none',
    color: 'inherit',
    font: 'inherit',
    fontWeight: theme.typography.fontWeightMedium,
    cursor: 'pointer',
    padding: 0,
    userSelect: 'none',
  }),
  row: css({
    cursor: 'pointer',
    '&:hover': { background: theme.colors.action.hover },
    '&:focus': { outline: `2px solid ${theme.colors.primary.main}`, outlineOffset: -2 },
  }),
  selected: css({ background: theme.colors.action.selected }),
  noise: css({ color: theme.colors.text.secondary }),
  // width 100% with max-width 0: the column gets what the figures leave.
  label: css({
    width: '100%',
    maxWidth: 0,
    overflow: 'hidden',
    textOverflow: 'ellipsis',
    textAlign: 'left !important' as 'left',
  }),
});
