import React from 'react';

import { GrafanaTheme2 } from '@grafana/data';

import { selectors } from '../../selectors';
import { strings } from '../../strings';
import { formatShare } from '../format';
import { Component, EvolutionData, shortName, timelineOf } from './model';

const s = strings.evolution;
const sel = selectors.evolution;

const ROW_H = 16;

interface Props {
  data: EvolutionData;
  build: string;
  /** The matrix's visible rows: the timeline follows its expansion. */
  rows: Component[];
  width: number;
  labelWidth: number;
  theme: GrafanaTheme2;
}

/**
 * Timeline shows a build's execution timeline as a heat strip per component:
 * one cell per time frame of the runs, opacity = the component's share of
 * that frame relative to the largest share shown.
 */
export function Timeline({ data, build, rows, width, labelWidth, theme }: Props) {
  const tl = timelineOf(data, build);
  const shown = rows.filter((c) => tl.shares.has(c.key));
  if (tl.frames === 0 || shown.length === 0) {
    return <div data-testid={sel.timeline}>{s.noTimeline}</div>;
  }
  const max = Math.max(...shown.flatMap((c) => tl.shares.get(c.key)!));
  // Leave room for the pane's vertical scroll bar.
  const fw = Math.max(2, (width - labelWidth - 20) / tl.frames);
  const color = theme.colors.primary.main;
  return (
    <div data-testid={sel.timeline} data-build={build}>
      {shown.map((c) => (
        <div
          key={c.key}
          data-testid={sel.timelineRow}
          data-component={c.name}
          style={{ display: 'flex', height: ROW_H, alignItems: 'center' }}
        >
          <div
            title={c.name}
            style={{
              width: labelWidth,
              flex: 'none',
              boxSizing: 'border-box',
              paddingLeft: 4 + c.depth * 14,
              overflow: 'hidden',
              textOverflow: 'ellipsis',
              whiteSpace: 'nowrap',
              fontSize: theme.typography.bodySmall.fontSize,
            }}
          >
            {shortName(c)}
          </div>
          <svg width={fw * tl.frames} height={ROW_H - 2} style={{ flex: 'none' }}>
            {tl.shares.get(c.key)!.map((v, f) => (
              <rect
                key={f}
                x={f * fw}
                width={Math.max(1, fw - 1)}
                height={ROW_H - 2}
                fill={color}
                fillOpacity={max > 0 ? v / max : 0}
              >
                <title>{`${s.frame} ${f}: ${formatShare(v)}`}</title>
              </rect>
            ))}
          </svg>
        </div>
      ))}
    </div>
  );
}
