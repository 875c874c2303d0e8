import React from 'react';

import { GrafanaTheme2 } from '@grafana/data';

import { selectors } from '../../selectors';
import { strings } from '../../strings';
import { Component, Edge, EvolutionData, edgesOf, componentKey, isWithin } from './model';

const s = strings.evolution;
const sel = selectors.evolution;

const LINE_H = 18;
// Average glyph width of the 11px labels, to shorten names to their column.
const CHAR_W = 6.5;

/** fit shortens a name from the left (the method end is what tells calls apart) to px. */
function fit(name: string, px: number): string {
  const n = Math.max(4, Math.floor(px / CHAR_W));
  return name.length > n ? `…${name.slice(-(n - 1))}` : name;
}
/** Edge colours: added calls blue, removed calls grey (and dashed, for print and colour blindness). */
export const EDGE_ADDED = 'rgb(50, 116, 217)';
export const EDGE_REMOVED = 'rgb(150, 150, 150)';

interface Props {
  data: EvolutionData;
  component: Component;
  build: string;
  width: number;
  theme: GrafanaTheme2;
}

/**
 * Edges draws the call edges the build added or removed around a component:
 * callers on the left, the component in the middle, callees on the right.
 * An edge between two of the component's own methods counts as a callee.
 */
export function Edges({ data, component, build, width, theme }: Props) {
  const edges = edgesOf(data, component, build);
  if (edges.length === 0) {
    return <div data-testid={sel.edges}>{s.noEdges}</div>;
  }
  const inside = (name: string) => isWithin(data.byKey.get(componentKey('method', name)), component);
  const incoming = edges.filter((e) => !inside(e.caller));
  const outgoing = edges.filter((e) => inside(e.caller));
  const colW = Math.max(120, (width - 40) / 3);
  const h = (Math.max(incoming.length, outgoing.length, 1) + 1.5) * LINE_H;
  const midY = h / 2;
  const text = theme.colors.text.primary;
  const line = (e: Edge, x1: number, y1: number, x2: number, y2: number, i: number) => (
    <line
      key={`l${i}`}
      data-testid={sel.edgeLine}
      data-status={e.status}
      x1={x1}
      y1={y1}
      x2={x2}
      y2={y2}
      stroke={e.status === 'added' ? EDGE_ADDED : EDGE_REMOVED}
      strokeWidth={2}
      strokeDasharray={e.status === 'removed' ? '4 3' : undefined}
    />
  );
  const label = (e: Edge, name: string, x: number, y: number, anchor: 'start' | 'end', i: number) => (
    <text
      key={`t${i}`}
      data-testid={sel.edge}
      data-status={e.status}
      data-caller={e.caller}
      data-callee={e.callee}
      x={x}
      y={y + 4}
      textAnchor={anchor}
      fill={e.status === 'added' ? EDGE_ADDED : text}
      fontSize={11}
    >
      <title>{name}</title>
      {`${fit(name, colW - 70)} (${e.status === 'added' ? s.addedEdge : s.removedEdge})`}
    </text>
  );
  // Row 0 holds the column titles.
  const y = (i: number) => LINE_H * (i + 1.5);
  return (
    <svg data-testid={sel.edges} width={colW * 3 + 40} height={h}>
      <text x={colW - 4} y={12} textAnchor="end" fill={theme.colors.text.secondary} fontSize={11}>
        {s.callers}
      </text>
      <text x={colW * 2 + 44} y={12} fill={theme.colors.text.secondary} fontSize={11}>
        {s.callees}
      </text>
      {incoming.map((e, i) => line(e, colW, y(i), colW + 20 + colW / 2 - 60, midY, i))}
      {outgoing.map((e, i) => line(e, colW + 20 + colW / 2 + 60, midY, colW * 2 + 40, y(i), i + incoming.length))}
      {incoming.map((e, i) => label(e, e.caller, colW - 4, y(i), 'end', i))}
      {outgoing.map((e, i) => label(e, e.callee, colW * 2 + 44, y(i), 'start', i + incoming.length))}
      <rect
        x={colW + 20 + colW / 2 - 60}
        y={midY - 10}
        width={120}
        height={20}
        fill={theme.colors.background.secondary}
        stroke={theme.colors.border.strong}
      />
      <text x={colW + 20 + colW / 2} y={midY + 4} textAnchor="middle" fill={text} fontSize={11}>
        <title>{component.name}</title>
        {fit(component.name, 116)}
      </text>
    </svg>
  );
}
