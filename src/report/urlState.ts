// The state of the report's and serve's page in the URL's fragment, so that
// a reload, back/forward and a pasted link reopen the same view. The
// fragment works for a report opened from disk (file://) as for serve, and
// never reaches a server. Keys (docs/REPORT.md):
//
//   query (serve):  app, type, head, headRun, base, baseRun, build (each
//                   repeated for several), q.FIELD=JSON for any other field
//                   of the query model (so new fields, e.g. filters, need no
//                   new key)
//   panel view:     mode, layout, side, inverted, collapsed, norm, sig, search, row,
//                   zoom, drill and culprit (one label a key, root side first);
//                   around a culprit: sandwich, keep, drop, hideFrames,
//                   showFrom, only (the panel's ask on top of the query)
//   page:           palette
import { queryTypes } from '../datasource/queryTypes';
import { FlamediffQuery, defaultQuery } from '../datasource/types';
import { aroundKeys, cleanAround } from '../panel/model/around';
import type { Palette } from '../panel/render/colors';
import type { PanelView } from '../panel/viewState';

/** PageState is everything the fragment holds. */
export interface PageState {
  /** serve's shown query; the report's frames are fixed. */
  query?: FlamediffQuery;
  view: PanelView;
  palette?: Palette;
}

/** Query fields with keys of their own, or never in a link. */
const namedFields = new Set(['refId', 'queryType', 'app', 'head', 'base', 'builds', 'datasource', 'hide', 'key']);

/** encodeState writes a page state as a fragment (without "#"). */
export function encodeState(s: PageState): string {
  const p = new URLSearchParams();
  const q = s.query;
  if (q) {
    p.set('app', q.app);
    p.set('type', q.queryType);
    q.head?.builds.forEach((b) => p.append('head', b));
    q.head?.runs.forEach((r) => p.append('headRun', r));
    q.base?.builds.forEach((b) => p.append('base', b));
    q.base?.runs.forEach((r) => p.append('baseRun', r));
    q.builds?.forEach((b) => p.append('build', b));
    for (const [k, v] of Object.entries(q)) {
      const d = (defaultQuery as Record<string, unknown>)[k];
      if (!namedFields.has(k) && v !== undefined && JSON.stringify(v) !== JSON.stringify(d)) {
        p.set(`q.${k}`, JSON.stringify(v));
      }
    }
  }
  const v = s.view;
  const flag = (key: string, value: boolean | undefined, dflt: boolean) =>
    value !== undefined && value !== dflt && p.set(key, value ? '1' : '0');
  if (v.mode && v.mode !== 'flame') {
    p.set('mode', v.mode);
  }
  if (v.layout && v.layout !== 'graph') {
    p.set('layout', v.layout);
  }
  if (v.side && v.side !== 'head') {
    p.set('side', v.side);
  }
  flag('inverted', v.inverted, false);
  flag('collapsed', v.collapsed, false);
  if (v.normalize) {
    p.set('norm', v.normalize);
  }
  flag('sig', v.significantOnly, true);
  if (v.search) {
    p.set('search', v.search);
  }
  if (v.row) {
    p.set('row', v.row);
  }
  const around = cleanAround(v);
  aroundKeys.forEach((k) => around[k] && p.set(k, around[k]!));
  v.drill?.forEach((l) => p.append('drill', l));
  v.zoom?.forEach((l) => p.append('zoom', l));
  v.culprit?.forEach((l) => p.append('culprit', l));
  if (s.palette && s.palette !== 'default') {
    p.set('palette', s.palette);
  }
  return p.toString();
}

/**
 * decodeState reads a fragment (with or without "#"). A key with a value it
 * does not know is left out (the page's default applies), never an error:
 * a link edited by hand still opens.
 */
export function decodeState(fragment: string): PageState {
  const p = new URLSearchParams(fragment.replace(/^#/, ''));
  const one = <T extends string>(key: string, allowed: readonly T[]) => {
    const v = p.get(key);
    return allowed.includes(v as T) ? (v as T) : undefined;
  };
  const flag = (key: string) => (p.get(key) === '1' ? true : p.get(key) === '0' ? false : undefined);
  const list = (key: string) => (p.has(key) ? p.getAll(key) : undefined);
  const view: PanelView = {
    mode: one('mode', ['flame', 'runs'] as const),
    layout: one('layout', ['graph', 'tree', 'both', 'split'] as const),
    side: one('side', ['head', 'base'] as const),
    inverted: flag('inverted'),
    collapsed: flag('collapsed'),
    normalize: one('norm', ['absolute', 'relative'] as const),
    significantOnly: flag('sig'),
    search: p.get('search') || undefined,
    row: p.get('row') || undefined,
    zoom: list('zoom'),
    drill: list('drill'),
    culprit: list('culprit'),
    ...cleanAround(Object.fromEntries(aroundKeys.map((k) => [k, p.get(k) ?? undefined]))),
  };
  const state: PageState = { view: dropUndefined(view), palette: one('palette', ['default', 'colorBlind'] as const) };
  const app = p.get('app');
  const type = one('type', queryTypes);
  if (app && type) {
    const query = {
      ...defaultQuery,
      refId: 'A',
      app,
      queryType: type,
      head: { builds: p.getAll('head'), runs: p.getAll('headRun') },
      base: { builds: p.getAll('base'), runs: p.getAll('baseRun') },
      builds: p.getAll('build'),
    } as FlamediffQuery;
    for (const [k, v] of p) {
      const field = k.startsWith('q.') ? k.slice(2) : '';
      if (field && !namedFields.has(field)) {
        try {
          (query as unknown as Record<string, unknown>)[field] = JSON.parse(v);
        } catch {
          // Not JSON: the field keeps its default.
        }
      }
    }
    state.query = query;
  }
  return state;
}

function dropUndefined<T extends object>(o: T): T {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as T;
}
