import { PanelPlugin } from '@grafana/data';

import { strings } from '../strings';
import { FlamediffPanel } from './components/FlamediffPanel';
import { PanelOptions, defaultPanelOptions } from './types';

const s = strings.options;

/** The flamediff-flamegraph-panel plugin. */
export const plugin = new PanelPlugin<PanelOptions>(FlamediffPanel).setPanelOptions((builder) =>
  builder
    .addRadio({
      path: 'palette',
      name: s.palette,
      defaultValue: defaultPanelOptions.palette,
      settings: {
        options: [
          { value: 'default', label: s.paletteDefault },
          { value: 'colorBlind', label: s.paletteColorBlind },
        ],
      },
    })
    .addRadio({
      path: 'singleColorBy',
      name: s.singleColorBy,
      defaultValue: defaultPanelOptions.singleColorBy,
      settings: {
        options: [
          { value: 'package', label: s.byPackage },
          { value: 'self', label: s.bySelf },
        ],
      },
    })
    .addNumberInput({
      path: 'diffScale',
      name: s.diffScale,
      description: s.diffScaleHelp,
      defaultValue: defaultPanelOptions.diffScale,
      settings: { min: 0, max: 1, step: 0.001 },
    })
    .addBooleanSwitch({ path: 'showTable', name: s.showTable, defaultValue: defaultPanelOptions.showTable })
    .addRadio({
      path: 'defaultSide',
      name: s.defaultSide,
      defaultValue: defaultPanelOptions.defaultSide,
      settings: {
        options: [
          { value: 'head', label: strings.panel.head },
          { value: 'base', label: strings.panel.base },
        ],
      },
    })
    .addRadio({
      path: 'layout',
      name: s.layout,
      description: s.layoutHelp,
      defaultValue: defaultPanelOptions.layout,
      settings: {
        options: (['graph', 'tree', 'both', 'split'] as const).map((value) => ({
          value,
          label: strings.panel.layouts[value],
        })),
      },
    })
);
