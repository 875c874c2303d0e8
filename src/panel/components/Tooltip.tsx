import { css } from '@emotion/css';
import React from 'react';

import { GrafanaTheme2 } from '@grafana/data';
import { useStyles2 } from '@grafana/ui';

import { selectors } from '../../selectors';
import { strings } from '../../strings';
import { formatShare, formatValue } from '../format';
import { FlameData, SideName } from '../model/flameData';

interface Props {
  data: FlameData;
  node: number;
  side: SideName;
  x: number;
  y: number;
}

const t = strings.panel.tooltip;

/** tooltipRows lists what the tooltip shows for a node, as label/value pairs. */
export function tooltipRows(data: FlameData, node: number, side: SideName): Array<[string, string]> {
  const u = data.unit;
  const { base, head } = data;
  if (!head) {
    return [
      [t.total, formatValue(base.total[node], u)],
      [t.self, formatValue(base.self[node], u)],
      [t.share, formatShare(base.rootTotal > 0 ? base.total[node] / base.rootTotal : 0)],
    ];
  }
  const shown = side === 'head' ? head : base;
  return [
    [t.headTotal, formatValue(head.total[node], u)],
    [t.headSelf, formatValue(head.self[node], u)],
    [t.baseTotal, formatValue(base.total[node], u)],
    [t.baseSelf, formatValue(base.self[node], u)],
    [t.delta, formatShare(data.delta[node], true)],
    [t.share, formatShare(shown.rootTotal > 0 ? shown.total[node] / shown.rootTotal : 0)],
  ];
}

/** Tooltip shows a node's label, self/total for head and base, delta and share. */
export function Tooltip({ data, node, side, x, y }: Props) {
  const styles = useStyles2(getStyles);
  return (
    <div className={styles.tooltip} style={{ left: x + 12, top: y + 12 }} data-testid={selectors.panel.tooltip}>
      <div className={styles.label}>{data.labels[data.labelIdx[node]]}</div>
      <table>
        <tbody>
          {tooltipRows(data, node, side).map(([k, v]) => (
            <tr key={k}>
              <td className={styles.key}>{k}</td>
              <td>{v}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

const getStyles = (theme: GrafanaTheme2) => ({
  tooltip: css({
    position: 'absolute',
    pointerEvents: 'none',
    zIndex: theme.zIndex.tooltip,
    background: theme.colors.background.secondary,
    border: `1px solid ${theme.colors.border.medium}`,
    borderRadius: theme.shape.radius.default,
    boxShadow: theme.shadows.z2,
    padding: theme.spacing(1),
    maxWidth: 480,
    fontSize: theme.typography.bodySmall.fontSize,
  }),
  label: css({
    fontWeight: theme.typography.fontWeightMedium,
    wordBreak: 'break-all',
    marginBottom: theme.spacing(0.5),
  }),
  key: css({ color: theme.colors.text.secondary, paddingRight: theme.spacing(2) }),
});
