import { css } from '@emotion/css';
import React from 'react';

import { GrafanaTheme2 } from '@grafana/data';
import { useStyles2 } from '@grafana/ui';

import { selectors } from '../../selectors';
import { strings } from '../../strings';
import { formatP, formatShare, formatValue } from '../format';
import { Culprit } from '../model/culprits';
import { FlameData, SideName, runValues } from '../model/flameData';
import { isOther } from '../model/focus';
import { Palette, diffRGB } from '../render/colors';

interface Props {
  data: FlameData;
  node: number;
  side: SideName;
  palette: Palette;
  x: number;
  y: number;
  /** The culprit entering at this node, if any. */
  culprit?: Culprit;
}

const t = strings.panel.tooltip;

/** formatSigned shows a change in the unit with its sign. */
function formatSigned(v: number, unit?: string): string {
  return `${v > 0 ? '+' : v < 0 ? '−' : ''}${formatValue(Math.abs(v), unit)}`;
}

/**
 * relativeChange is the node's own change, (head - base) / base, in words
 * when the node exists on one side only: never "+inf%".
 */
export function relativeChange(head: number, base: number): string {
  if (base === 0 && head > 0) {
    return t.onlyHead;
  }
  if (head === 0 && base > 0) {
    return t.onlyBase;
  }
  return base > 0 ? formatShare((head - base) / base, true) : '–';
}

/** tooltipRows lists what the tooltip shows for a node, as label/value pairs. */
export function tooltipRows(data: FlameData, node: number, side: SideName, culprit?: Culprit): Array<[string, string]> {
  const u = data.unit;
  const { base, head, stats, info } = data;
  if (!head) {
    return [
      [t.total, formatValue(base.total[node], u)],
      [t.self, formatValue(base.self[node], u)],
      [t.share, formatShare(base.rootTotal > 0 ? base.total[node] / base.rootTotal : 0)],
    ];
  }
  const shown = side === 'head' ? head : base;
  const [h, b] = [head.total[node], base.total[node]];
  const rows: Array<[string, string]> = [
    [t.headTotal + t.perRun, formatValue(h, u)],
    [t.headSelf + t.perRun, formatValue(head.self[node], u)],
    [t.baseTotal + t.perRun, formatValue(b, u)],
    [t.baseSelf + t.perRun, formatValue(base.self[node], u)],
    [t.change, formatSigned(h - b, u)],
    [t.relChange, relativeChange(h, b)],
    [t.ofBase[info.normalize], formatShare(data.delta[node], true)],
  ];
  if (stats) {
    const sig = stats.significant[node];
    rows.push(
      [t.ci, `${formatShare(stats.deltaLow[node], true)} … ${formatShare(stats.deltaHigh[node], true)}`],
      [`${t.p} / ${t.q}`, `${formatP(stats.pValue[node])} / ${formatP(stats.qValue[node])}`],
      ['', sig < 0 ? '–' : t.significant(sig === 1, info.alpha)]
    );
    if (culprit) {
      rows.push([t.culprit, t.culpritValue(culprit.kind, formatP(culprit.qValue))]);
    }
    if (stats.otherCount[node] > 0) {
      rows.push([t.other(stats.otherCount[node]), ''], [t.otherMax, formatShare(stats.otherMaxDelta[node], true)]);
    }
  }
  if (info.headRuns !== undefined || info.baseRuns !== undefined) {
    rows.push([t.runs, t.runsValue(info.headRuns, info.baseRuns)]);
  }
  rows.push([t.share, formatShare(shown.rootTotal > 0 ? shown.total[node] / shown.rootTotal : 0)]);
  return rows;
}

const STRIP_W = 160;
const STRIP_H = 28;

/**
 * RunStrip draws a node's per-run totals of both sides on one scale: head on
 * top in the palette's slower colour, base below in its faster colour.
 */
export function RunStrip({ head, base, palette }: { head: number[]; base: number[]; palette: Palette }) {
  const max = Math.max(...head, ...base, 0) || 1;
  const [slow, fast] = [1, -1].map((end) => `rgb(${diffRGB(end, palette).join(', ')})`);
  const dots = (vals: number[], y: number, color: string) =>
    vals.map((v, i) => <circle key={`${y}-${i}`} cx={4 + (v / max) * (STRIP_W - 8)} cy={y} r={3} fill={color} />);
  return (
    <svg
      width={STRIP_W}
      height={STRIP_H}
      data-testid={selectors.panel.runStrip}
      role="img"
      aria-label={t.strip[palette]}
    >
      <line x1={4} x2={STRIP_W - 4} y1={STRIP_H / 2} y2={STRIP_H / 2} stroke="currentColor" strokeOpacity={0.2} />
      {dots(head, 7, slow)}
      {dots(base, STRIP_H - 7, fast)}
    </svg>
  );
}

/** Tooltip shows a node's label, its values per side, the change and its statistics. */
export function Tooltip({ data, node, side, x, y, palette, culprit }: Props) {
  const styles = useStyles2(getStyles);
  const stats = data.stats;
  const runs = stats && { head: runValues(stats.headRuns[node]), base: runValues(stats.baseRuns[node]) };
  return (
    <div className={styles.tooltip} style={{ left: x + 12, top: y + 12 }} data-testid={selectors.panel.tooltip}>
      <div className={styles.label}>{data.labels[data.labelIdx[node]]}</div>
      <table>
        <tbody>
          {tooltipRows(data, node, side, culprit).map(([k, v]) => (
            <tr key={k + v}>
              <td className={styles.key}>{k}</td>
              <td>{v}</td>
            </tr>
          ))}
        </tbody>
      </table>
      {runs && (runs.head.length > 0 || runs.base.length > 0) && (
        <div title={t.strip[palette]}>
          <RunStrip head={runs.head} base={runs.base} palette={palette} />
        </div>
      )}
      {isOther(data, node) && <div className={styles.key}>{t.otherHint}</div>}
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
