import { css, cx } from '@emotion/css';
import React, { useEffect, useMemo, useState } from 'react';

import { GrafanaTheme2 } from '@grafana/data';
import { useStyles2 } from '@grafana/ui';

import { selectors } from '../../selectors';
import { strings } from '../../strings';
import { formatShare, formatValue } from '../format';
import { FlameData } from '../model/flameData';
import { SortKey, sortRows, topFunctions } from '../model/topFunctions';

interface Props {
  data: FlameData;
  selected?: string;
  onSelect: (label: string) => void;
  height: number;
}

/** Rows beyond this are not rendered: the table is for the top of the list. */
const MAX_ROWS = 300;
const t = strings.panel.table;

/** TopTable lists functions by self/total (and delta for a diff); click a row to focus it. */
export function TopTable({ data, selected, onSelect, height }: Props) {
  const styles = useStyles2(getStyles);
  const diff = Boolean(data.head);
  const [sort, setSort] = useState<{ key: SortKey; desc: boolean }>({ key: diff ? 'delta' : 'self', desc: true });
  // The table is computed after the graph has painted: on a million nodes
  // it would otherwise delay the first drawn frame by tens of milliseconds.
  const [all, setAll] = useState<{ data: FlameData; rows: ReturnType<typeof topFunctions> }>();
  useEffect(() => {
    const id = setTimeout(() => setAll({ data, rows: topFunctions(data) }));
    return () => clearTimeout(id);
  }, [data]);
  const current = all?.data === data ? all.rows : undefined;
  const rows = useMemo(
    () => (current ? sortRows(current, sort.key, diff, sort.desc).slice(0, MAX_ROWS) : []),
    [current, sort, diff]
  );

  const header = (key: SortKey, label: string) => (
    <th
      className={styles.th}
      onClick={() => setSort((s) => ({ key, desc: s.key === key ? !s.desc : true }))}
      aria-sort={sort.key === key ? (sort.desc ? 'descending' : 'ascending') : 'none'}
    >
      {label}
      {sort.key === key ? (sort.desc ? ' ▼' : ' ▲') : ''}
    </th>
  );

  return (
    <div className={styles.wrap} style={{ maxHeight: height }}>
      <table className={styles.table} data-testid={selectors.panel.table}>
        <thead>
          <tr>
            {header('label', t.function)}
            {header('self', t.self)}
            {header('total', diff ? t.headTotal : t.total)}
            {diff && <th className={styles.th}>{t.baseTotal}</th>}
            {diff && header('delta', t.delta)}
          </tr>
        </thead>
        <tbody>
          {rows.map((r) => (
            <tr
              key={r.label}
              data-testid={selectors.panel.tableRow}
              className={cx(styles.row, r.label === selected && styles.selected)}
              onClick={() => onSelect(r.label)}
            >
              <td className={styles.label} title={r.label}>
                {r.label}
              </td>
              <td>{formatValue(diff ? r.selfHead : r.selfBase, data.unit)}</td>
              <td>{formatValue(diff ? r.totalHead : r.totalBase, data.unit)}</td>
              {diff && <td>{formatValue(r.totalBase, data.unit)}</td>}
              {diff && <td>{formatShare(r.delta, true)}</td>}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

const getStyles = (theme: GrafanaTheme2) => ({
  wrap: css({ overflow: 'auto' }),
  table: css({
    width: '100%',
    fontSize: theme.typography.bodySmall.fontSize,
    borderCollapse: 'collapse',
    td: { padding: theme.spacing(0.25, 1), whiteSpace: 'nowrap', textAlign: 'right' },
  }),
  th: css({
    position: 'sticky',
    top: 0,
    background: theme.colors.background.primary,
    cursor: 'pointer',
    padding: theme.spacing(0.5, 1),
    textAlign: 'right',
    userSelect: 'none',
  }),
  row: css({ cursor: 'pointer', '&:hover': { background: theme.colors.action.hover } }),
  selected: css({ background: theme.colors.action.selected }),
  label: css({ maxWidth: 320, overflow: 'hidden', textOverflow: 'ellipsis', textAlign: 'left !important' as 'left' }),
});
