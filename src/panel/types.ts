import { Palette, SingleColorBy } from './render/colors';
import { SideName } from './model/flameData';

/** Panel options, edited in the panel editor. */
export interface PanelOptions {
  palette: Palette;
  singleColorBy: SingleColorBy;
  /** Delta that takes the full diff colour; 0 means the largest delta in the graph. */
  diffScale: number;
  showTable: boolean;
  defaultSide: SideName;
}

/** Defaults of PanelOptions, also used by the harness and tests. */
export const defaultPanelOptions: PanelOptions = {
  palette: 'default',
  singleColorBy: 'package',
  diffScale: 0,
  showTable: true,
  defaultSide: 'head',
};
