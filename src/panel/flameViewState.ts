import type { Drill } from './components/Breadcrumb';
import type { Focus } from './components/FlameCanvas';
import type { Normalization, SideName } from './model/flameData';
import type { Layout, PanelView } from './viewState';

/** A point over the graph: a node (-1 for none) and where the pointer is. */
export interface NodeAt {
  node: number;
  x: number;
  y: number;
}

/**
 * FlameViewState is what the flame graph mode shows of its frames: every
 * choice of the user's, and the requests it makes of the canvas. Answers
 * of the panel's own queries are not in it: they arrive as effects do.
 */
export interface FlameViewState {
  layout: Layout;
  side: SideName;
  inverted: boolean;
  collapsed: boolean;
  /** The search box's text; exact when it is a function chosen in the table (searched exactly). */
  text: string;
  exact: boolean;
  /** The chosen culprit's call path, highlighted in the graph. */
  picked?: string[];
  significantOnly: boolean;
  /** A zoom the canvas is asked for (a new seq is a new request), and the count of resets asked. */
  focus?: Focus;
  resetSeq: number;
  /** The node the canvas has zoomed onto (as it reports, or as the call tree or a split chose; -1 before either). */
  zoomed: number;
  hover: NodeAt;
  /** The node menu, open on a node. */
  menu?: NodeAt;
  /**
   * The normalisation shown and the drill-down, chosen on the frames `of`:
   * they hold for those frames only (new frames show their own).
   */
  chosen?: { of: unknown; norm: Normalization; drill?: Drill };
}

export type FlameViewAction =
  | { type: 'layout'; layout: Layout }
  | { type: 'side'; side: SideName }
  | { type: 'inverted'; inverted: boolean }
  | { type: 'collapsed'; collapsed: boolean }
  | { type: 'significantOnly'; significantOnly: boolean }
  /** The search box's text: a substring search. */
  | { type: 'search'; text: string }
  /** A function chosen in the table, zoomed onto at node (its largest, -1 when not drawn). */
  | { type: 'row'; label: string; node: number }
  /** A culprit chosen, at node in the drawn tree (0 the root, -1 pruned away: drilled to). */
  | { type: 'culprit'; path: string[]; node: number }
  | { type: 'reset' }
  /** Asks the canvas to zoom onto node. */
  | { type: 'zoom'; node: number }
  /**
   * A node chosen in the call tree or in a split's graph: the zoomed node at
   * once (the tree shows it without a canvas; a split's two canvases then
   * report it unchanged) and asked of the canvases.
   */
  | { type: 'select'; node: number }
  /** The canvas zoomed onto node. */
  | { type: 'zoomed'; node: number }
  | { type: 'hover'; node: number; x: number; y: number }
  | { type: 'menu'; menu?: NodeAt }
  | { type: 'normalize'; of: unknown; norm: Normalization }
  /** A drill-down asked for on the frames of (path [] returns to them). */
  | { type: 'drill'; of: unknown; norm: Normalization; path: string[] }
  /** Its answer: the subtree, zoomed onto node (-1 when it lacks the path). */
  | { type: 'drilled'; of: unknown; norm: Normalization; drill: Drill; node: number };

/** initialState is the view a host's start view (or none) opens with. */
export function initialState(start: PanelView, defaultSide: SideName, layout: Layout = 'graph'): FlameViewState {
  return {
    layout: start.layout ?? layout,
    side: start.side ?? defaultSide,
    inverted: start.inverted ?? false,
    collapsed: start.collapsed ?? false,
    text: start.row ?? start.search ?? '',
    exact: start.row !== undefined,
    picked: start.culprit,
    significantOnly: start.significantOnly ?? true,
    resetSeq: 0,
    zoomed: -1,
    hover: { node: -1, x: 0, y: 0 },
  };
}

const zoomTo = (s: FlameViewState, node: number): Focus => ({ node, seq: (s.focus?.seq ?? 0) + 1 });

/**
 * set is s with patch, or s itself when patch changes nothing: React skips
 * the render then, as it does for a useState set to its value (the canvas
 * reports its zoom from a layout effect; a new state each time would loop).
 */
function set(s: FlameViewState, patch: Partial<FlameViewState>): FlameViewState {
  const keys = Object.keys(patch) as Array<keyof FlameViewState>;
  return keys.every((k) => Object.is(s[k], patch[k])) ? s : { ...s, ...patch };
}

/** reduce is the view after an action: a pure function of both. */
export function reduce(s: FlameViewState, a: FlameViewAction): FlameViewState {
  switch (a.type) {
    case 'layout':
      return set(s, { layout: a.layout });
    case 'side':
      return set(s, { side: a.side });
    case 'inverted':
      return set(s, { inverted: a.inverted });
    case 'collapsed':
      return set(s, { collapsed: a.collapsed });
    case 'significantOnly':
      return set(s, { significantOnly: a.significantOnly });
    case 'search':
      return { ...s, picked: undefined, text: a.text, exact: false };
    case 'row':
      return {
        ...s,
        picked: undefined,
        text: a.label,
        exact: true,
        focus: a.node >= 0 ? zoomTo(s, a.node) : s.focus,
      };
    case 'culprit':
      return {
        ...s,
        text: '',
        exact: false,
        picked: a.path.length > 0 ? a.path : undefined,
        focus: a.node > 0 ? zoomTo(s, a.node) : s.focus,
        resetSeq: a.node === 0 ? s.resetSeq + 1 : s.resetSeq,
      };
    case 'reset':
      return { ...s, picked: undefined, resetSeq: s.resetSeq + 1, text: '' };
    case 'zoom':
      return { ...s, focus: zoomTo(s, a.node) };
    case 'select':
      return { ...s, focus: zoomTo(s, a.node), zoomed: a.node };
    case 'zoomed':
      return set(s, { zoomed: a.node });
    case 'hover':
      // Moves outside any node change nothing: no render for them.
      return s.hover.node === a.node && a.node < 0 ? s : { ...s, hover: { node: a.node, x: a.x, y: a.y } };
    case 'menu':
      return set(s, { menu: a.menu });
    case 'normalize':
      return { ...s, chosen: { of: a.of, norm: a.norm }, focus: undefined };
    case 'drill':
      // A zoom request names a node of the frames it was made on.
      return {
        ...s,
        chosen: { of: a.of, norm: a.norm, drill: a.path.length > 0 ? { path: a.path, loading: true } : undefined },
        focus: undefined,
      };
    case 'drilled':
      // Zoom onto the focused node: the answer is root -> path -> its subtree.
      return {
        ...s,
        chosen: { of: a.of, norm: a.norm, drill: a.drill },
        focus: a.node >= 0 ? zoomTo(s, a.node) : s.focus,
      };
  }
}

/** chosenFor is the normalisation and drill-down shown on the frames of: own and none unless chosen on them. */
export function chosenFor(s: FlameViewState, of: unknown, own: Normalization): { norm: Normalization; drill?: Drill } {
  return s.chosen && s.chosen.of === of ? s.chosen : { norm: own, drill: undefined };
}

/**
 * panelView is the view a host keeps (in its URL): the normalisation shown
 * unless the query's own (no choice of the view), the drill-down's path
 * and the zoomed node's path.
 */
export function panelView(
  s: FlameViewState,
  shown: { norm: Normalization; own: Normalization; drill?: string[]; zoom?: string[] }
): PanelView {
  return {
    layout: s.layout,
    side: s.side,
    inverted: s.inverted,
    collapsed: s.collapsed,
    normalize: shown.norm !== shown.own ? shown.norm : undefined,
    significantOnly: s.significantOnly,
    search: !s.exact && s.text ? s.text : undefined,
    row: s.exact && s.text ? s.text : undefined,
    zoom: shown.zoom,
    drill: shown.drill,
    culprit: s.picked,
  };
}
