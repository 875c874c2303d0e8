import { Dispatch, useEffect, useRef } from 'react';

import { FlameData, Normalization } from '../model/flameData';
import { nodeAtPath, nodePath } from '../model/focus';
import { FlameViewAction, FlameViewState, panelView } from '../flameViewState';
import { PanelView, ViewHost } from '../viewState';
import { Drill } from './Breadcrumb';

interface Restore {
  /** The host that keeps the view (in its URL), and the view it started from. */
  host?: ViewHost;
  start: PanelView;
  state: FlameViewState;
  dispatch: Dispatch<FlameViewAction>;
  data?: FlameData;
  norm: Normalization;
  own: Normalization;
  drill?: Drill;
  canNormalize: boolean;
  onNormalize: (v: Normalization) => void;
  /** Queries a subtree at full detail; undefined without a querier. */
  drillTo?: (path: string[]) => void;
}

/**
 * useRestoredView restores a host's start view, then reports the view to
 * the host whenever it changes. What of the start view needs the data (the
 * normalisation, then the drill-down, then the zoom) is restored one step a
 * render, as each may query.
 */
export function useRestoredView(r: Restore) {
  const { host, start, state, dispatch, data, norm, drill } = r;
  const restoring = useRef<(PanelView & { zoomNode?: number }) | undefined>(
    start.normalize || start.drill || start.zoom ? { ...start } : undefined
  );
  const reported = useRef('');
  // No step waits on the user, so an effect on every render advances it as
  // answers arrive; the ref ends it, so a zoom cannot loop.
  useEffect(() => {
    const pending = restoring.current;
    if (!pending || !data || drill?.loading) {
      return;
    }
    if (pending.normalize) {
      const v = pending.normalize;
      pending.normalize = undefined;
      if (v !== norm && r.canNormalize) {
        r.onNormalize(v);
        return;
      }
    }
    if (pending.drill) {
      const path = pending.drill;
      pending.drill = undefined;
      if (r.drillTo && path.length > 0) {
        r.drillTo(path);
        return;
      }
    }
    if (pending.zoom) {
      const node = nodeAtPath(data, pending.zoom);
      pending.zoom = undefined;
      if (node > 0) {
        pending.zoomNode = node;
        dispatch({ type: 'zoom', node });
        return;
      }
    }
    // Done once the canvas has zoomed: reporting earlier would write a view
    // without the zoom into the URL (and a history entry).
    if (pending.zoomNode === undefined || state.zoomed === pending.zoomNode) {
      restoring.current = undefined;
    }
  });
  const zoomed = state.zoomed;
  const view = panelView(state, {
    norm,
    own: r.own,
    drill: drill?.path,
    zoom: data && zoomed > 0 && zoomed < data.n ? nodePath(data, zoomed) : undefined,
  });
  useEffect(() => {
    const json = JSON.stringify(view);
    if (host && !restoring.current && json !== reported.current) {
      reported.current = json;
      host.onChange(view);
    }
  });
}
