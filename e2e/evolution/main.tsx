// The evolution view's browser-test harness: a page without Grafana that
// mounts EvolutionView on frames handed over by the test (window.evolution).
import React from 'react';
import { createRoot, Root } from 'react-dom/client';

import { DataFrameJSON, ThemeContext, createTheme, dataFrameFromJSON } from '@grafana/data';

import { EvolutionView, isEvolutionData } from '../../src/panel/evolution';
import { PanelOptions, defaultPanelOptions } from '../../src/panel/types';

/** What the tests call on window.evolution. */
export interface EvolutionHarness {
  /** Mounts the view; returns isEvolutionData of the frames. */
  mount(p: { frames: DataFrameJSON[]; options?: Partial<PanelOptions>; width?: number; height?: number; theme?: 'dark' | 'light' }): boolean;
}

declare global {
  interface Window {
    evolution: EvolutionHarness;
  }
}

let root: Root | undefined;

window.evolution = {
  mount({ frames, options, width = 1200, height = 700, theme = 'dark' }) {
    const series = frames.map((f) => dataFrameFromJSON(f));
    root?.unmount();
    root = createRoot(document.getElementById('root')!);
    const t = createTheme({ colors: { mode: theme } });
    document.body.style.background = t.colors.background.primary;
    root.render(
      <ThemeContext.Provider value={t}>
        <EvolutionView series={series} width={width} height={height} options={{ ...defaultPanelOptions, ...options }} />
      </ThemeContext.Provider>
    );
    return isEvolutionData(series);
  },
};
