import { css } from '@emotion/css';
import React, { useState } from 'react';

import { GrafanaTheme2 } from '@grafana/data';
import { locationService } from '@grafana/runtime';
import { Button, useStyles2, useTheme2 } from '@grafana/ui';

import { selectors } from '../../selectors';
import { strings } from '../../strings';
import { formatShare, formatValue } from '../format';
import { Run, RunsSummary, comparisonVars, measure, spread } from '../model/runs';

interface Props {
  runs: Run[];
  summary?: RunsSummary;
  /** Unit of the plotted measure (total, else duration). */
  unit?: string;
  width: number;
}

const s = strings.runs;
const ROW = 56;
/** Dots alternate between these vertical offsets so that runs with close values stay apart. */
const JITTER = [0, -12, 12];
const MARGIN = 60;

/**
 * RunDetails plots every run per side (its profile total, else its duration:
 * dots, min-max spread and the mean), prints the summary, and opens the comparison of two clicked runs by
 * setting the dashboard variables base_build/base_run/head_build/head_run.
 */
export function RunDetails({ runs, summary, unit, width }: Props) {
  const theme = useTheme2();
  const styles = useStyles2(getStyles);
  const [picked, setPicked] = useState<Run[]>([]);
  const all = spread(runs);
  if (!all) {
    return null;
  }
  const [lo, hi] = all[0] === all[1] ? [all[0] * 0.95, all[1] * 1.05 + 1e-9] : all;
  const plotW = Math.max(100, width - 2 * MARGIN);
  const x = (d: number) => MARGIN + ((d - lo) / (hi - lo)) * plotW;
  const sides: Array<'base' | 'head'> = ['base', 'head'];
  const color = { base: theme.visualization.getColorByName('green'), head: theme.visualization.getColorByName('red') };

  const toggle = (r: Run) => setPicked((p) => (p.includes(r) ? p.filter((q) => q !== r) : [...p, r].slice(-2)));

  return (
    <div data-testid={selectors.runs.root} style={{ color: theme.colors.text.primary }}>
      <svg width={width} height={ROW * sides.length + 20}>
        {sides.map((side, k) => {
          const mine = runs.filter((r) => r.side === side);
          const range = spread(mine);
          const y = ROW * k + ROW / 2;
          const mean = summary?.sides[side]?.mean;
          return (
            <g key={side}>
              <text x={4} y={y + 4} fill={theme.colors.text.secondary} fontSize={12}>
                {side === 'head' ? strings.panel.head : strings.panel.base}
              </text>
              {range && (
                <line
                  x1={x(range[0])}
                  x2={x(range[1])}
                  y1={y}
                  y2={y}
                  stroke={color[side]}
                  strokeOpacity={0.4}
                  strokeWidth={6}
                />
              )}
              {mean !== undefined && Number.isFinite(mean) && (
                <line
                  x1={x(mean)}
                  x2={x(mean)}
                  y1={y - 20}
                  y2={y + 20}
                  stroke={theme.colors.text.primary}
                  strokeWidth={2}
                />
              )}
              {mine.map((r, k) => (
                <circle
                  key={`${r.build}/${r.run}`}
                  data-testid={selectors.runs.dot}
                  cx={x(measure(r))}
                  cy={y + JITTER[k % JITTER.length]}
                  r={picked.includes(r) ? 7 : 5}
                  fill={color[side]}
                  stroke={picked.includes(r) ? theme.colors.text.primary : 'none'}
                  strokeWidth={2}
                  style={{ cursor: 'pointer' }}
                  onClick={() => toggle(r)}
                >
                  <title>{`${r.build} / ${r.run}: ${formatValue(measure(r), unit)} (${s.duration} ${formatValue(r.duration, 's')})`}</title>
                </circle>
              ))}
            </g>
          );
        })}
        <text x={MARGIN} y={ROW * sides.length + 14} fill={theme.colors.text.secondary} fontSize={11}>
          {formatValue(lo, unit)}
        </text>
        <text
          x={MARGIN + plotW}
          y={ROW * sides.length + 14}
          fill={theme.colors.text.secondary}
          fontSize={11}
          textAnchor="end"
        >
          {formatValue(hi, unit)}
        </text>
      </svg>
      {summary && <Summary summary={summary} unit={unit} />}
      <div className={styles.actions}>
        <span>{s.pickTwo}</span>
        <Button
          size="sm"
          disabled={picked.length !== 2}
          data-testid={selectors.runs.compare}
          onClick={() => locationService.partial({ ...comparisonVars(picked[0], picked[1]) }, true)}
        >
          {s.compare}
        </Button>
        {picked.length > 0 && (
          <Button size="sm" variant="secondary" onClick={() => setPicked([])}>
            {s.clear}
          </Button>
        )}
      </div>
    </div>
  );
}

function Summary({ summary, unit }: { summary: RunsSummary; unit?: string }) {
  const styles = useStyles2(getStyles);
  const fmt = (v?: number) => (v === undefined || !Number.isFinite(v) ? '–' : formatValue(v, unit));
  return (
    <div className={styles.summary} data-testid={selectors.runs.summary}>
      {(['base', 'head'] as const).map((side) => {
        const x = summary.sides[side];
        return (
          x && (
            <div key={side}>
              <strong>{side === 'head' ? strings.panel.head : strings.panel.base}</strong>: {s.mean} {fmt(x.mean)},{' '}
              {s.median} {fmt(x.median)}, {s.stddev} {fmt(x.stddev)}
            </div>
          )
        );
      })}
      <div data-testid={selectors.runs.change}>
        {s.change}: <strong>{formatShare(summary.change ?? NaN, true)}</strong> ({s.ci}{' '}
        {formatShare(summary.ciLow ?? NaN, true)} … {formatShare(summary.ciHigh ?? NaN, true)}), {s.pValue}{' '}
        {summary.pValue?.toPrecision(3) ?? '–'}, {summary.significant ? s.significant : s.notSignificant}
      </div>
      {summary.mdc !== undefined && (
        <div data-testid={selectors.runs.power}>
          {s.detects(formatShare(summary.mdc, false))}
          {summary.runsToDecide !== undefined && summary.runsToDecide > 0 && `; ${s.toDecide(summary.runsToDecide)}`}.
        </div>
      )}
    </div>
  );
}

const getStyles = (theme: GrafanaTheme2) => ({
  summary: css({ fontSize: theme.typography.bodySmall.fontSize, padding: theme.spacing(1, 0) }),
  actions: css({ display: 'flex', alignItems: 'center', gap: theme.spacing(1), color: theme.colors.text.secondary }),
});
