// The browser-test harness: a page without Grafana that mounts the panel, the
// data source editors and Grafana's own flame graph on demand. Tests and the
// benchmark drive it through window.harness (see HarnessApi).
import { injectGlobal } from '@emotion/css';
import React from 'react';
import { createRoot, Root } from 'react-dom/client';
import { flushSync } from 'react-dom';

import {
  DataFrameJSON,
  DataSourceInstanceSettings,
  DataSourceSettings,
  ThemeContext,
  createTheme,
  dataFrameFromJSON,
} from '@grafana/data';
import { FlameGraph } from '@grafana/flamegraph';

import { ConfigEditor } from '../../src/datasource/components/ConfigEditor';
import { QueryEditor } from '../../src/datasource/components/QueryEditor';
import { FlamediffDataSource } from '../../src/datasource/datasource';
import { FlamediffOptions, FlamediffQuery, FlamediffSecureOptions } from '../../src/datasource/types';
import { FlamediffPanel } from '../../src/panel/components/FlamediffPanel';
import { Querier, QuerierContext } from '../../src/panel/query';
import { PanelOptions, defaultPanelOptions } from '../../src/panel/types';
import type { Layout } from '../../src/panel/viewState';
import { grafanaElements } from '../../src/report/mount';
import { panelProps } from '../../src/report/panelProps';
import { bigFlameFrame } from './bigFrame';

type ThemeMode = 'dark' | 'light';

/**
 * Resource answers as the backend sends them, keyed by "path?query" (exact
 * call) or by path alone (any parameters).
 */
export type Resources = Record<string, unknown>;

/** What tests call on window.harness. */
export interface HarnessApi {
  /**
   * Mounts the panel on frames. With query (the model that produced them) the
   * panel's own queries go to the real backend (POST /query, see
   * global-setup.ts) as that model with the panel's changes.
   */
  mountPanel(p: {
    frames: DataFrameJSON[];
    query?: Record<string, unknown>;
    options?: Partial<PanelOptions>;
    width?: number;
    height?: number;
    theme?: ThemeMode;
  }): void;
  mountGrafanaFlameGraph(p: { frame: DataFrameJSON; width?: number; height?: number }): void;
  mountQueryEditor(p: { query: Partial<FlamediffQuery>; resources: Resources }): void;
  mountConfigEditor(p: { options?: Partial<DataSourceSettings<FlamediffOptions, FlamediffSecureOptions>> }): void;
  /**
   * Mounts the panel or Grafana's flame graph (both with their default views:
   * graph and table) on a generated frame; resolves when it is first drawn (ms).
   */
  mountBig(p: {
    nodes: number;
    which: 'flamediff' | 'grafana';
    width: number;
    height: number;
    /** The panel's layout (default: the graph); with the tree, resolves when its rows are in the DOM. */
    layout?: Layout;
  }): Promise<number>;
  /** Every value the mounted editor passed to onChange, oldest first. */
  emitted: unknown[];
  /** Resource calls the query editor made: "path?query". */
  calls: string[];
  /** Query models the panel sent, oldest first. */
  queries: unknown[];
  unmount(): void;
}

declare global {
  interface Window {
    harness: HarnessApi;
  }
}

const container = document.getElementById('root')!;
let root: Root | undefined;

// Grafana's element styles, which its components rely on (as in the report).
injectGlobal(grafanaElements(createTheme()));

function show(el: React.ReactElement, theme: ThemeMode = 'dark', sync = false) {
  root?.unmount();
  root = createRoot(container);
  document.body.style.background = theme === 'dark' ? '#111217' : '#ffffff';
  const themed = <ThemeContext.Provider value={createTheme({ colors: { mode: theme } })}>{el}</ThemeContext.Provider>;
  if (sync) {
    flushSync(() => root!.render(themed));
  } else {
    root.render(themed);
  }
}

/** A real FlamediffDataSource whose resource calls are answered from `resources`. */
function dataSource(resources: Resources): FlamediffDataSource {
  const settings = {
    id: 1,
    uid: 'flamediff',
    type: 'flamediff-clickhouse-datasource',
    name: 'Flamediff',
    jsonData: {},
  };
  const ds = new FlamediffDataSource(settings as unknown as DataSourceInstanceSettings<FlamediffOptions>);
  ds.getResource = async <T,>(path: string, params?: Record<string, string>): Promise<T> => {
    const call = `${path}?${new URLSearchParams(params ?? {}).toString()}`;
    harness.calls.push(call);
    const answer = resources[call] ?? resources[path];
    if (answer === undefined) {
      throw new Error(`harness: no resource ${call}`);
    }
    return answer as T;
  };
  return ds;
}

function nextFrame(): Promise<void> {
  return new Promise((r) => requestAnimationFrame(() => r()));
}

/** drawn reports whether the first canvas under container has painted its root row. */
function drawn(): boolean {
  const canvas = container.querySelector('canvas');
  if (!canvas || canvas.width === 0) {
    return false;
  }
  const px = canvas.getContext('2d')!.getImageData(Math.floor(canvas.width / 2), 4, 1, 1).data;
  return px[3] > 0;
}

/** drawnAll reports whether every canvas under container has painted (the split view's two graphs). */
function drawnAll(): boolean {
  return Array.from(container.querySelectorAll('canvas')).every((c) => c.dataset.drawn !== undefined);
}

/** backendQuerier answers the panel's queries with the real backend, as query with the panel's changes. */
function backendQuerier(query: Record<string, unknown>): Querier {
  return async (patch) => {
    const model = { ...query, ...patch };
    harness.queries.push(model);
    const res = await fetch('/query', { method: 'POST', body: JSON.stringify(model) });
    if (!res.ok) {
      throw new Error(await res.text());
    }
    return ((await res.json()) as DataFrameJSON[]).map(dataFrameFromJSON);
  };
}

const harness: HarnessApi = {
  emitted: [],
  calls: [],
  queries: [],
  mountPanel({ frames, query, options, width = 1000, height = 500, theme = 'dark' }) {
    harness.queries = [];
    const series = frames.map(dataFrameFromJSON);
    const panel = <FlamediffPanel {...panelProps(series, { ...defaultPanelOptions, ...options }, width, height)} />;
    show(
      query ? <QuerierContext.Provider value={backendQuerier(query)}>{panel}</QuerierContext.Provider> : panel,
      theme
    );
  },
  mountGrafanaFlameGraph({ frame, width = 1000, height = 600 }) {
    const data = dataFrameFromJSON(frame);
    show(
      <div style={{ width, height }} data-testid="grafana-flamegraph">
        <FlameGraph data={data as never} getTheme={() => createTheme({ colors: { mode: 'dark' } }) as never} />
      </div>
    );
  },
  mountQueryEditor({ query, resources }) {
    harness.emitted = [];
    harness.calls = [];
    const ds = dataSource(resources);
    function Stateful() {
      const [q, setQ] = React.useState({ refId: 'A', ...query } as FlamediffQuery);
      return (
        <QueryEditor
          query={q}
          datasource={ds}
          onChange={(next) => {
            harness.emitted.push(next);
            setQ(next);
          }}
          onRunQuery={() => undefined}
        />
      );
    }
    show(<Stateful />);
  },
  mountConfigEditor({ options }) {
    harness.emitted = [];
    const initial = {
      id: 1,
      uid: 'flamediff',
      orgId: 1,
      name: 'Flamediff',
      type: 'flamediff-clickhouse-datasource',
      typeName: 'Flamediff ClickHouse',
      typeLogoUrl: '',
      access: 'proxy',
      url: '',
      user: '',
      database: '',
      basicAuth: false,
      basicAuthUser: '',
      isDefault: false,
      readOnly: false,
      withCredentials: false,
      jsonData: {},
      secureJsonFields: {},
      ...options,
    } as DataSourceSettings<FlamediffOptions, FlamediffSecureOptions>;
    function Stateful() {
      const [o, setO] = React.useState(initial);
      return (
        <ConfigEditor
          options={o}
          onOptionsChange={(next) => {
            harness.emitted.push(next);
            setO(next);
          }}
        />
      );
    }
    show(<Stateful />);
  },
  async mountBig({ nodes, which, width, height, layout = 'graph' }) {
    const frame = bigFlameFrame(nodes);
    const t0 = performance.now();
    if (which === 'flamediff') {
      show(
        <FlamediffPanel {...panelProps([frame], { ...defaultPanelOptions, layout }, width, height)} />,
        'dark',
        true
      );
      if (layout === 'tree') {
        // The tree renders its rows with the panel's (synchronous) render: painted in the next frame.
        while (!container.querySelector('[role="treegrid"] [role="row"][aria-level]')) {
          await nextFrame();
        }
        await nextFrame();
        return performance.now() - t0;
      }
    } else {
      show(
        <div style={{ width, height }}>
          <FlameGraph data={frame as never} getTheme={() => createTheme({ colors: { mode: 'dark' } }) as never} />
        </div>,
        'dark',
        true
      );
    }
    while (!drawn() || (layout === 'split' && !drawnAll())) {
      await nextFrame();
    }
    await nextFrame();
    return performance.now() - t0;
  },
  unmount() {
    root?.unmount();
    root = undefined;
  },
};

window.harness = harness;
