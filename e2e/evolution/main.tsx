// The evolution view's browser-test harness: a page without Grafana that
// mounts EvolutionView on frames handed over by the test (window.evolution).
import React from 'react';
import { createRoot, Root } from 'react-dom/client';

import {
  DataFrame,
  DataFrameJSON,
  FieldConfigOptionsRegistry,
  FieldConfigPropertyItem,
  FieldConfigSource,
  FieldType,
  ScopedVars,
  ThemeColors,
  ThemeContext,
  applyFieldOverrides,
  createTheme,
  dataFrameFromJSON,
  toDataFrame,
} from '@grafana/data';
import { Table } from '@grafana/ui';

import { EvolutionView, isEvolutionData } from '../../src/panel/evolution';
import { PanelOptions, defaultPanelOptions } from '../../src/panel/types';

/** What the tests call on window.evolution. */
export interface EvolutionHarness {
  /** Mounts the view; returns isEvolutionData of the frames. */
  mount(p: {
    frames: DataFrameJSON[];
    options?: Partial<PanelOptions>;
    width?: number;
    height?: number;
    theme?: 'dark' | 'light';
  }): boolean;
  /**
   * Mounts a generated matrix of components x builds (all packages, present
   * everywhere) and resolves with the ms from mount until it is first painted.
   */
  mountSynthetic(p: { components: number; builds: number }): Promise<number>;
  /**
   * Mounts Grafana's table on a frame with a dashboard panel's field config
   * (its overrides' links) and dashboard variables, as the table panel does.
   */
  mountTable(p: { frame: DataFrameJSON; fieldConfig: FieldConfigSource; vars: Record<string, string> }): void;
  /** The colours of Grafana's theme of that mode, for the tests' exact checks. */
  themeColors(mode: 'dark' | 'light'): ThemeColors;
}

declare global {
  interface Window {
    evolution: EvolutionHarness;
  }
}

let root: Root | undefined;

function show(
  series: DataFrame[],
  options: Partial<PanelOptions> | undefined,
  width: number,
  height: number,
  theme: 'dark' | 'light'
) {
  root?.unmount();
  root = createRoot(document.getElementById('root')!);
  const t = createTheme({ colors: { mode: theme } });
  document.body.style.background = t.colors.background.primary;
  root.render(
    <ThemeContext.Provider value={t}>
      <EvolutionView series={series} width={width} height={height} options={{ ...defaultPanelOptions, ...options }} />
    </ThemeContext.Provider>
  );
}

// synthetic is an "evolution" frame of n packages in b builds, with
// pseudo-random times so that changes span the colour scale.
function synthetic(n: number, b: number): DataFrame {
  const rows = n * b;
  const col = <T,>(f: (c: number, k: number) => T) =>
    Array.from({ length: rows }, (_, i) => f(Math.floor(i / b), i % b));
  const time = col((c, k) => 1000 + ((c * 7919 + k * 104729) % 997));
  return toDataFrame({
    name: 'evolution',
    fields: [
      { name: 'component', type: FieldType.string, values: col((c) => `pkg${c}`) },
      { name: 'kind', type: FieldType.string, values: col(() => 'package') },
      { name: 'parent', type: FieldType.string, values: col(() => '') },
      { name: 'build', type: FieldType.string, values: col((_, k) => `b${k}`) },
      { name: 'buildTime', type: FieldType.time, values: col((_, k) => k * 3_600_000) },
      { name: 'time', type: FieldType.number, values: time },
      { name: 'share', type: FieldType.number, values: col((c) => 1 / (c + 1)) },
      {
        name: 'change',
        type: FieldType.number,
        values: time.map((t, i) => (i % b === 0 ? null : t / time[i - 1] - 1)),
      },
      { name: 'modified', type: FieldType.number, values: col((c, k) => (c + k) % 12) },
      { name: 'added', type: FieldType.number, values: col(() => 0) },
    ],
  });
}

// Grafana's template service, for the forms a provisioned link uses: a
// dashboard variable ${name} and the data macro ${__data.fields.NAME} (the
// value of field NAME in the link's row), URL-encoded inside a URL.
function interpolator(vars: Record<string, string>) {
  return (text: string, scoped?: ScopedVars, format?: unknown) =>
    text.replace(/\$\{(__data\.fields\.)?(\w+)\}/g, (ref, data: string | undefined, name: string) => {
      let v: unknown = vars[name];
      if (data) {
        const ctx = scoped?.__dataContext?.value as { frame: DataFrame; rowIndex: number } | undefined;
        v = ctx?.frame.fields.find((f) => f.name === name)?.values[ctx.rowIndex];
      }
      if (v === undefined) {
        return ref;
      }
      return format === 'uriencode' ? encodeURIComponent(String(v)) : String(v);
    });
}

// The one field option the table's links need: Grafana's standard "links".
const linksOption = {
  id: 'links',
  path: 'links',
  name: 'Links',
  process: (v: unknown) => v,
  shouldApply: () => true,
  override: () => null,
  editor: () => null,
} as unknown as FieldConfigPropertyItem;

window.evolution = {
  mount({ frames, options, width = 1200, height = 700, theme = 'dark' }) {
    const series = frames.map((f) => dataFrameFromJSON(f));
    show(series, options, width, height, theme);
    return isEvolutionData(series);
  },
  mountTable({ frame, fieldConfig, vars }) {
    root?.unmount();
    root = createRoot(document.getElementById('root')!);
    const theme = createTheme({ colors: { mode: 'dark' } });
    const [data] = applyFieldOverrides({
      data: [dataFrameFromJSON(frame)],
      fieldConfig,
      fieldConfigRegistry: new FieldConfigOptionsRegistry(() => [linksOption]),
      replaceVariables: interpolator(vars),
      theme,
    });
    root.render(
      <ThemeContext.Provider value={theme}>
        <Table data={data} width={1200} height={500} />
      </ThemeContext.Provider>
    );
  },
  themeColors(mode) {
    // Plain data only: the page hands it to the test as JSON.
    return JSON.parse(JSON.stringify(createTheme({ colors: { mode } }).colors));
  },
  mountSynthetic({ components, builds }) {
    const series = [synthetic(components, builds)];
    const t0 = performance.now();
    show(series, undefined, 1280, 800, 'dark');
    // Two frames: React commits, then the browser paints.
    return new Promise((ok) => requestAnimationFrame(() => requestAnimationFrame(() => ok(performance.now() - t0))));
  },
};
