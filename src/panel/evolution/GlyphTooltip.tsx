import React from 'react';
import { createPortal } from 'react-dom';

import { GrafanaTheme2 } from '@grafana/data';

import { selectors } from '../../selectors';
import { strings } from '../../strings';
import { formatP, formatShare, formatValue } from '../format';
import { CellRef } from './Matrix';
import { Build, ChangePoint } from './model';

const s = strings.evolution;
const sel = selectors.evolution;

interface Props {
  cell: CellRef;
  build: Build;
  unit?: string;
  /** Mouse position in viewport coordinates. */
  x: number;
  y: number;
  theme: GrafanaTheme2;
}

const OFFSET = 12;
/** Changed methods listed at most; the rest are counted. */
const MAX_LISTED = 8;

/** ChangeList names a cell's modified or added methods. */
function ChangeList({ title, names, theme }: { title: string; names: string[]; theme: GrafanaTheme2 }) {
  if (names.length === 0) {
    return null;
  }
  const rest = names.length - MAX_LISTED;
  return (
    <div data-testid={sel.changeList} style={{ marginTop: theme.spacing(0.5) }}>
      <div style={{ color: theme.colors.text.secondary }}>{title}</div>
      {names.slice(0, MAX_LISTED).map((n) => (
        <div key={n} style={{ wordBreak: 'break-all' }}>
          {n}
        </div>
      ))}
      {rest > 0 && <div style={{ color: theme.colors.text.secondary }}>{s.more(rest)}</div>}
    </div>
  );
}

/** formatPBound reads "= 0.012" or "< 1e-15". */
function formatPBound(p: number): string {
  const v = formatP(p);
  return v.startsWith('<') ? v : `= ${v}`;
}

/** ChangePointList gives each change point's function, before → after, change and p. */
function ChangePointList({ points, unit, theme }: { points: ChangePoint[]; unit?: string; theme: GrafanaTheme2 }) {
  if (points.length === 0) {
    return null;
  }
  const rest = points.length - MAX_LISTED;
  return (
    <div data-testid={sel.changePointList} style={{ marginTop: theme.spacing(0.5) }}>
      <div style={{ color: theme.colors.text.secondary }}>{s.changePoints}</div>
      {points.slice(0, MAX_LISTED).map((p) => (
        <div key={p.function} style={{ wordBreak: 'break-all' }}>
          {p.function}: {formatValue(p.before, unit)} → {formatValue(p.after, unit)} (
          {p.change === null ? s.appeared : formatShare(p.change, true)}, p {formatPBound(p.pValue)})
        </div>
      ))}
      {rest > 0 && <div style={{ color: theme.colors.text.secondary }}>{s.more(rest)}</div>}
    </div>
  );
}

/**
 * GlyphTooltip shows a cell's figures next to the mouse. It is portalled to
 * the body with fixed position so the matrix's scroll box does not clip it.
 */
export function GlyphTooltip({ cell, build, unit, x, y, theme }: Props) {
  const c = cell.row.cells[cell.col];
  if (!c) {
    return null;
  }
  const flip = x + 320 > window.innerWidth;
  const rows: Array<[string, string]> = [
    [s.time, formatValue(c.time, unit)],
    [s.share, formatShare(c.share)],
    [s.change, c.change === null ? s.noChange : formatShare(c.change, true)],
    ...(c.pValue !== null && c.qValue !== null && c.significant !== null
      ? ([
          [s.pValue, `${formatP(c.pValue)} / ${formatP(c.qValue)}`],
          ['', s.significant(c.significant)],
        ] as Array<[string, string]>)
      : []),
    [s.modified, String(c.modified)],
    [s.added, String(c.added)],
  ];
  return createPortal(
    <div
      data-testid={sel.tooltip}
      style={{
        position: 'fixed',
        left: flip ? undefined : x + OFFSET,
        right: flip ? window.innerWidth - x + OFFSET : undefined,
        top: y + OFFSET,
        zIndex: theme.zIndex.tooltip,
        pointerEvents: 'none',
        maxWidth: 360,
        padding: theme.spacing(1),
        background: theme.colors.background.secondary,
        border: `1px solid ${theme.colors.border.medium}`,
        boxShadow: theme.shadows.z2,
        color: theme.colors.text.primary,
        fontSize: theme.typography.bodySmall.fontSize,
      }}
    >
      <div style={{ fontWeight: theme.typography.fontWeightMedium, wordBreak: 'break-all' }}>{cell.row.name}</div>
      <div style={{ color: theme.colors.text.secondary }}>
        {cell.row.kind} · {build.name}
      </div>
      <table>
        <tbody>
          {rows.map(([k, v]) => (
            <tr key={k}>
              <td style={{ paddingRight: 8, color: theme.colors.text.secondary }}>{k}</td>
              <td data-field={k}>{v}</td>
            </tr>
          ))}
        </tbody>
      </table>
      <ChangeList title={s.modified} names={c.modifiedMethods} theme={theme} />
      <ChangeList title={s.added} names={c.addedMethods} theme={theme} />
      <ChangePointList points={c.changePoints} unit={unit} theme={theme} />
    </div>,
    document.body
  );
}
