import { createContext } from 'react';

import type { Around } from './model/around';
import type { Normalization, SideName } from './model/flameData';

/**
 * PanelView is what a link to the report or `flamediff serve` reopens of the
 * panel (docs/REPORT.md): every choice the panel makes without changing its
 * query, and what it asks on top of its query around a culprit (Around: the
 * sandwich function, the filters, only). A key left out takes the panel's default.
 */
/** What the flame graph mode shows: the graph, the call tree, both side by side, or base beside head (a diff). */
export type Layout = 'graph' | 'tree' | 'both' | 'split';

export interface PanelView extends Around {
  mode?: 'flame' | 'runs';
  layout?: Layout;
  side?: SideName;
  inverted?: boolean;
  collapsed?: boolean;
  normalize?: Normalization;
  significantOnly?: boolean;
  /** The search box's text (a substring search). */
  search?: string;
  /** The top table's chosen row: a function name, searched exactly. */
  row?: string;
  /** The zoomed node: labels from the root's child down to it. */
  zoom?: string[];
  /** The drill-down's `focus` path (Load full detail, an `other` node). */
  drill?: string[];
  /** The chosen culprit: its call path, highlighted in the graph. */
  culprit?: string[];
}

/**
 * ViewHost keeps the panel's view outside it (in the page's URL). view is
 * the latest: a part of the panel that mounts (again) starts from it; each
 * part reports its keys with onChange. Grafana has no such host: there the
 * panel keeps its view itself and what changes the query goes through
 * dashboard variables (docs/PANEL.md).
 */
export interface ViewHost {
  view: PanelView;
  onChange(patch: PanelView): void;
}

export const ViewContext = createContext<ViewHost | undefined>(undefined);

/**
 * SandwichContext opens the callers and callees of a function (the panel
 * re-queries with `sandwich`): the graph's node menu and the toolbar call
 * it, and so may a culprit list.
 */
export const SandwichContext = createContext<((fn: string) => void) | undefined>(undefined);

/**
 * FiltersContext lets the graph's toolbar show or hide the filter row; the
 * row stays shown while a filter or only is set, or a message is due.
 */
export const FiltersContext = createContext<{ open: boolean; toggle: () => void } | undefined>(undefined);
