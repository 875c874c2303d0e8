import React, { useEffect, useLayoutEffect, useRef, useState } from 'react';

import { selectors } from '../../selectors';
import { strings } from '../../strings';
import { FlameData, Side } from '../model/flameData';
import { Move, isOther, move } from '../model/focus';
import { NodeColors } from '../render/colors';
import { DrawStyle } from '../render/draw';
import { contentHeight, fullView, hitTest, pan, rowTop, scaleOf, zoomAt, zoomTo } from '../render/layout';
import { ViewSync } from '../split/viewSync';
import { useCanvasView } from './useCanvasView';

/** A request to zoom onto a node; seq makes repeated requests distinct. */
export interface Focus {
  node: number;
  seq: number;
  /** Pixels scrolled away from the root (default 0). */
  scrollY?: number;
}

export interface FlameCanvasProps {
  data: FlameData;
  side: Side;
  colorIndex: NodeColors;
  match?: Uint8Array;
  style: DrawStyle;
  width: number;
  height: number;
  rowHeight: number;
  focus?: Focus;
  /** resetSeq changes to reset the view. */
  resetSeq: number;
  onHover: (node: number, x: number, y: number) => void;
  /** The node the view is zoomed onto, -1 after a reset (for "load full detail"). */
  onZoomed: (node: number) => void;
  /** Drills into an `other` node (a query with focus); unset when the panel cannot query. */
  onDrill?: (node: number) => void;
  /** Opens the node's context menu (right click, the menu key or Shift+F10) at page point (x, y). */
  onMenu?: (node: number, x: number, y: number) => void;
  /** Draws the root at the bottom, children above (a sandwich's callers); up and down follow. */
  flipped?: boolean;
  testId?: string;
  label?: string;
  /** Links this graph's zoom and pan with the other graphs of a split. */
  sync?: ViewSync;
  /** A node outlined (the node hovered in the other graph of a split); -1 for none. */
  outline?: number;
}

const keyMoves: Record<string, Move> = {
  ArrowUp: 'parent',
  ArrowDown: 'child',
  ArrowLeft: 'prev',
  ArrowRight: 'next',
};
const flippedMoves: Record<string, Move> = { ...keyMoves, ArrowUp: 'child', ArrowDown: 'parent' };

/** Drags shorter than this many pixels are clicks (zoom), longer ones pan. */
const CLICK_SLOP = 4;
const WHEEL_ZOOM = 0.0015;

/**
 * FlameCanvas draws a side of a flame graph and handles click-to-zoom, drag to
 * pan and ctrl/cmd+wheel to zoom, and the keyboard: arrows move a selected
 * node, Enter zooms onto it (or drills into an `other` node), Escape resets.
 * The view lives in a ref and redraws go through requestAnimationFrame, so
 * interaction never re-renders React (useCanvasView).
 */
export function FlameCanvas(props: FlameCanvasProps) {
  const { data, side, width, height, rowHeight, onHover } = props;
  const { canvasRef, viewRef, selectedRef, anchorRef, share, geo, redraw } = useCanvasView(props);
  const flipped = Boolean(props.flipped);
  const drag = useRef<{ x: number; y: number; moved: boolean } | null>(null);
  const [cursor, setCursor] = useState('pointer');

  const maxScroll = Math.max(0, contentHeight(data, geo()) - height);
  const local = (e: { clientX: number; clientY: number }) => {
    const r = canvasRef.current!.getBoundingClientRect();
    return [e.clientX - r.left, e.clientY - r.top];
  };

  const onMouseDown = (e: React.MouseEvent) => {
    if (e.button !== 0) {
      return; // the context menu's button neither zooms nor pans
    }
    const [x, y] = local(e);
    drag.current = { x, y, moved: false };
  };
  const onMouseMove = (e: React.MouseEvent) => {
    const [x, y] = local(e);
    const d = drag.current;
    if (d && (d.moved || Math.abs(x - d.x) + Math.abs(y - d.y) > CLICK_SLOP)) {
      const v = pan(viewRef.current, geo(), x - d.x, y - d.y, side.rootTotal);
      viewRef.current = { ...v, scrollY: Math.min(v.scrollY, maxScroll) };
      drag.current = { x, y, moved: true };
      setCursor('grabbing');
      share();
      redraw();
      return;
    }
    onHover(hitTest(data, side, viewRef.current, geo(), x, y), x, y);
  };
  const onMouseUp = (e: React.MouseEvent) => {
    const d = drag.current;
    drag.current = null;
    setCursor('pointer');
    if (!d || d.moved) {
      return;
    }
    const [x, y] = local(e);
    activate(hitTest(data, side, viewRef.current, geo(), x, y));
  };
  // activate is a click or Enter on a node: drill into `other`, else zoom.
  const activate = (node: number) => {
    if (node < 0) {
      return;
    }
    if (props.onDrill && isOther(data, node)) {
      props.onDrill(node);
      return;
    }
    viewRef.current = zoomTo(side, node, viewRef.current.scrollY);
    anchorRef.current = node;
    selectedRef.current = node;
    props.onZoomed(node);
    share();
    redraw();
  };
  // announce shows the keyboard's node like a hover: tooltip and live text.
  const announce = (node: number) => {
    const v = viewRef.current;
    const scale = geo().width / (v.x1 - v.x0);
    const x = Math.max(0, Math.min(width - 40, (side.startOf(node) - v.x0) * scale));
    onHover(node, x, rowTop(geo(), data.level[node], v.scrollY));
  };
  const onKeyDown = (e: React.KeyboardEvent) => {
    const m = (flipped ? flippedMoves : keyMoves)[e.key];
    if (m) {
      e.preventDefault();
      const from = selectedRef.current >= 0 ? selectedRef.current : 0;
      selectedRef.current = selectedRef.current >= 0 ? move(data, side, from, m) : 0;
      const i = selectedRef.current;
      // Keep the node in view: zoom out to it when it lies outside.
      const v = viewRef.current;
      const at = side.startOf(i);
      if (at + side.total[i] <= v.x0 || at >= v.x1) {
        viewRef.current = zoomTo(side, i, v.scrollY);
        anchorRef.current = i; // the node a split's other graph zooms onto
      }
      const y = data.level[i] * rowHeight;
      if (y < v.scrollY || y + rowHeight > v.scrollY + height) {
        viewRef.current = { ...viewRef.current, scrollY: Math.max(0, Math.min(maxScroll, y - height / 2)) };
      }
      if (viewRef.current !== v) {
        share(); // a split's other graph follows the view the keys moved
      }
      announce(i);
      redraw();
    } else if (e.key === 'Enter' || e.key === ' ') {
      e.preventDefault();
      activate(selectedRef.current >= 0 ? selectedRef.current : 0);
    } else if (props.onMenu && (e.key === 'ContextMenu' || (e.key === 'F10' && e.shiftKey))) {
      e.preventDefault();
      const i = selectedRef.current >= 0 ? selectedRef.current : 0;
      const v = viewRef.current;
      const x = Math.max(0, Math.min(width - 40, (side.startOf(i) - v.x0) * scaleOf(v, geo())));
      const r = canvasRef.current!.getBoundingClientRect();
      props.onMenu(i, r.left + x, r.top + rowTop(geo(), data.level[i], v.scrollY) + rowHeight);
    } else if (e.key === 'Escape') {
      e.preventDefault();
      viewRef.current = fullView(side);
      anchorRef.current = 0;
      props.onZoomed(-1);
      share();
      redraw();
    }
  };
  const onFocus = () => {
    if (selectedRef.current < 0) {
      selectedRef.current = 0;
    }
    announce(selectedRef.current);
    redraw();
  };
  const onWheel = (e: WheelEvent) => {
    const [x] = local(e);
    if (e.ctrlKey || e.metaKey) {
      // Only a non-passive native listener may stop the browser's page zoom.
      e.preventDefault();
      viewRef.current = zoomAt(viewRef.current, geo(), Math.exp(e.deltaY * WHEEL_ZOOM), x, side.rootTotal);
    } else if (maxScroll > 0) {
      viewRef.current = {
        ...viewRef.current,
        scrollY: Math.min(maxScroll, Math.max(0, viewRef.current.scrollY + e.deltaY)),
      };
    } else {
      return;
    }
    share();
    redraw();
  };
  const wheel = useRef(onWheel);
  useLayoutEffect(() => {
    wheel.current = onWheel;
  });
  useEffect(() => {
    const canvas = canvasRef.current!;
    const listener = (e: WheelEvent) => wheel.current(e);
    canvas.addEventListener('wheel', listener, { passive: false });
    return () => canvas.removeEventListener('wheel', listener);
  }, [canvasRef]);

  const onLeave = () => {
    drag.current = null;
    onHover(-1, 0, 0);
  };

  const dpr = typeof window !== 'undefined' ? window.devicePixelRatio || 1 : 1;
  return (
    <canvas
      ref={canvasRef}
      data-testid={props.testId ?? selectors.panel.canvas}
      width={Math.round(width * dpr)}
      height={Math.round(height * dpr)}
      style={{ width, height, cursor, display: 'block' }}
      onMouseDown={onMouseDown}
      onMouseMove={onMouseMove}
      onMouseUp={onMouseUp}
      onMouseLeave={onLeave}
      onContextMenu={(e) => {
        if (!props.onMenu) {
          return;
        }
        const [x, y] = local(e);
        const node = hitTest(data, side, viewRef.current, geo(), x, y);
        if (node >= 0) {
          e.preventDefault();
          props.onMenu(node, e.clientX, e.clientY);
        }
      }}
      tabIndex={0}
      role="application"
      aria-roledescription={strings.panel.canvasRole}
      aria-label={props.label ?? strings.panel.canvasLabel}
      onKeyDown={onKeyDown}
      onFocus={onFocus}
      onBlur={() => onHover(-1, 0, 0)}
    />
  );
}
