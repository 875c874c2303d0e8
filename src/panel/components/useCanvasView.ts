import { useCallback, useEffect, useLayoutEffect, useRef } from 'react';

import { Scratch, draw, newScratch } from '../render/draw';
import { Geometry, Viewport, fullView, zoomTo } from '../render/layout';
import { fromShared, toShared } from '../split/viewSync';
import type { FlameCanvasProps } from './FlameCanvas';

/** geometryOf is the one place a canvas's props become its geometry (drawing and hit-testing must agree). */
export function geometryOf(p: { width: number; height: number; rowHeight: number; flipped?: boolean }): Geometry {
  return { width: p.width, height: p.height, rowHeight: p.rowHeight, flipped: Boolean(p.flipped) };
}

/**
 * useCanvasView holds a flame canvas's view (in refs: interaction never
 * re-renders React) and draws it in an animation frame: anew for new data
 * or a reset, zoomed for a focus request, moved with a split's other graph.
 * It returns the refs and what the canvas's handlers call.
 */
export function useCanvasView(props: FlameCanvasProps) {
  const { data, side, width, height, rowHeight } = props;
  const canvasRef = useRef<HTMLCanvasElement>(null);
  const viewRef = useRef<Viewport>(fullView(side));
  // The latest props, for the animation-frame callback and a split's updates.
  const latest = useRef(props);
  useLayoutEffect(() => {
    latest.current = props;
  });
  // Grown by the first drawing to what the canvas can show.
  const scratch = useRef<Scratch>(newScratch(0));
  const frameReq = useRef(0);
  // The keyboard's node; -1 until the canvas gets the focus.
  const selectedRef = useRef(-1);
  // The node the view was last zoomed onto (0: the root), a split's shared anchor.
  const anchorRef = useRef(0);
  // share tells the other graphs of a split the view.
  const share = () => {
    const p = latest.current;
    p.sync?.publish(toShared(p.data, p.side, viewRef.current, anchorRef.current), canvasRef.current);
  };

  const flipped = Boolean(props.flipped);
  const geo = useCallback(() => geometryOf({ width, height, rowHeight, flipped }), [width, height, rowHeight, flipped]);

  const redraw = useCallback(() => {
    if (frameReq.current) {
      return;
    }
    frameReq.current = requestAnimationFrame(() => {
      frameReq.current = 0;
      const canvas = canvasRef.current;
      const ctx = canvas?.getContext('2d');
      if (!canvas || !ctx) {
        return;
      }
      const p = latest.current;
      const dpr = window.devicePixelRatio || 1;
      ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
      const drawn = draw(
        ctx,
        {
          data: p.data,
          side: p.side,
          view: viewRef.current,
          // The latest size, not this closure's: a resize while a frame is pending draws at the new size.
          geo: geometryOf(p),
          colorIndex: p.colorIndex,
          match: p.match,
          selected: p.outline !== undefined && p.outline >= 0 ? p.outline : selectedRef.current,
        },
        p.style,
        scratch.current
      );
      canvas.dataset.drawn = String(drawn);
    });
  }, []);

  useEffect(() => () => cancelAnimationFrame(frameReq.current), []);

  // New data (another variant or side) starts from the full view.
  useLayoutEffect(() => {
    viewRef.current = fullView(side);
    anchorRef.current = 0;
    if (selectedRef.current >= data.n) {
      selectedRef.current = -1;
    }
    latest.current.onZoomed(-1);
    redraw();
  }, [data, side, props.resetSeq, redraw]);

  useLayoutEffect(() => {
    if (props.focus) {
      const { node, scrollY } = props.focus;
      // In a split, a node absent on this side shows its nearest caller here.
      viewRef.current = props.sync
        ? fromShared(data, side, { anchor: node, u0: 0, u1: 1, scrollY: scrollY ?? 0 })
        : zoomTo(side, node, scrollY);
      anchorRef.current = node;
      selectedRef.current = props.focus.node;
      latest.current.onZoomed(props.focus.node);
      redraw();
    }
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [props.focus, side, redraw]);

  useLayoutEffect(redraw, [props.colorIndex, props.match, props.style, props.outline, width, height, redraw]);

  // A split's other graph moved: show the same part of the same node.
  const { sync } = props;
  useEffect(
    () =>
      sync?.subscribe((v, from) => {
        if (from !== canvasRef.current) {
          const p = latest.current;
          viewRef.current = fromShared(p.data, p.side, v);
          anchorRef.current = v.anchor;
          redraw();
        }
      }),
    [sync, redraw]
  );

  return { canvasRef, viewRef, selectedRef, anchorRef, share, geo, redraw };
}
