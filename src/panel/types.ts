import { Palette, SingleColorBy } from './render/colors';
import { SideName } from './model/flameData';
import type { Layout } from './viewState';

/** Panel options, edited in the panel editor. */
export interface PanelOptions {
  palette: Palette;
  singleColorBy: SingleColorBy;
  /** Delta that takes the full diff colour; 0 means the largest delta in the graph. */
  diffScale: number;
  showTable: boolean;
  defaultSide: SideName;
  /** What the panel opens on: the graph, the call tree or both (absent in dashboards saved before it: the graph). */
  layout?: Layout;
}

/** Defaults of PanelOptions, also used by the harness and tests. */
export const defaultPanelOptions: PanelOptions = {
  palette: 'default',
  singleColorBy: 'package',
  diffScale: 0,
  showTable: true,
  defaultSide: 'head',
  layout: 'graph',
};
