// The script of `flamediff serve`'s page: the data source's query editor on
// top (its pickers read GET /api/resources/...), the panel below (frames
// from POST /api/query), both answered by the same Go code as in Grafana.
import './boot';
import { css } from '@emotion/css';
import React, { useCallback, useEffect, useMemo, useRef, useState } from 'react';

import {
  DataFrame,
  DataSourceInstanceSettings,
  DataFrameJSON,
  SelectableValue,
  dataFrameFromJSON,
} from '@grafana/data';
import { Alert, Button, Select } from '@grafana/ui';

import { QueryEditor } from '../datasource/components/QueryEditor';
import { FlamediffDataSource } from '../datasource/datasource';
import { FlamediffOptions, FlamediffQuery, defaultQuery } from '../datasource/types';
import { selectors } from '../selectors';
import { strings } from '../strings';
import { Querier, QuerierContext } from '../panel/query';
import { aroundPatch } from '../panel/model/around';
import { PanelView } from '../panel/viewState';
import { mount } from './mount';
import { Page, Report } from './components/Report';
import { answered, call } from './handoff';
import { BuildInfo, Preset, applyPreset, openingQuery } from './presets';
import { usePageState } from './usePageState';

const s = strings.report;

/** A real FlamediffDataSource whose resources come from the local server. */
function localDataSource(): FlamediffDataSource {
  const settings = { id: 1, uid: 'local', type: 'flamediff-clickhouse-datasource', name: 'local', jsonData: {} };
  const ds = new FlamediffDataSource(settings as unknown as DataSourceInstanceSettings<FlamediffOptions>);
  ds.getResource = <T,>(path: string, params?: Record<string, string | string[]>) => {
    const q = new URLSearchParams();
    for (const [k, v] of Object.entries(params ?? {})) {
      (Array.isArray(v) ? v : [v]).forEach((x) => q.append(k, x));
    }
    return call<T>(`api/resources/${path}?${q}`);
  };
  return ds;
}

const ds = localDataSource();

const presetOptions: Array<SelectableValue<Preset>> = [
  { value: 'previous', label: s.presetPrevious },
  { value: 'against', label: s.presetAgainst },
  { value: 'headOnly', label: s.presetHeadOnly },
];

/**
 * Serve is the local UI: the query editor, a preset menu and the panel. The
 * shown query and the panel's view live in the URL's fragment; with none,
 * it opens on the first app's newest build against the one before it.
 */
function Serve() {
  const { state, generation, host, update } = usePageState();
  const [query, setQuery] = useState<FlamediffQuery>(
    () => state.query ?? ({ refId: 'A', ...defaultQuery } as FlamediffQuery)
  );
  // The first paint's answer to the URL's query, if it has come: the panel is in the page's first frame.
  const [initial] = useState(() => state.query && answered<DataFrameJSON[]>('api/query', state.query));
  const [series, setSeries] = useState<DataFrame[] | undefined>(() => initial?.map(dataFrameFromJSON));
  const [error, setError] = useState<string>();
  const [running, setRunning] = useState(false);
  const [builds, setBuilds] = useState<BuildInfo[]>([]);
  const [preset, setPreset] = useState<Preset>();
  // The panel's own queries (drill-down, the functions table, the other
  // normalisation) go to the same endpoint with the shown query patched.
  const shown = state.query;
  const querier = useMemo<Querier | undefined>(
    () =>
      shown &&
      (async (patch) => (await call<DataFrameJSON[]>('api/query', { ...shown, ...patch })).map(dataFrameFromJSON)),
    [shown]
  );
  const seq = useRef(0);
  // The query whose answer is shown (or asked for): one from the URL that
  // differs is a navigation, to run.
  const opened = useRef<FlamediffQuery | undefined>(initial ? state.query : undefined);
  // A new query mounts the panel afresh, on its default view.
  const [fresh, setFresh] = useState(0);
  // show runs q and, once answered, makes it the shown query (and the URL's).
  const show = useCallback(
    async (q: FlamediffQuery, replace = false) => {
      const id = ++seq.current;
      setRunning(true);
      setError(undefined);
      try {
        const frames = await call<DataFrameJSON[]>('api/query', q);
        if (id === seq.current) {
          const same = JSON.stringify(q) === JSON.stringify(opened.current);
          opened.current = q;
          setSeries(frames.map(dataFrameFromJSON));
          if (!same) {
            setFresh((n) => n + 1);
          }
          update({ query: q }, same ? {} : resetView, replace);
        }
      } catch (e) {
        if (id === seq.current) {
          setError(e instanceof Error ? e.message : String(e));
        }
      } finally {
        if (id === seq.current) {
          setRunning(false);
        }
      }
    },
    [update]
  );
  // The URL's query (on load, back/forward, a pasted link) is run, keeping
  // the URL's view; without one the page opens on the first app's newest
  // build against the one before.
  useEffect(() => {
    if (state.query) {
      if (JSON.stringify(opened.current) !== JSON.stringify(state.query)) {
        opened.current = state.query;
        setQuery(state.query);
        setSeries(undefined);
        show(state.query);
      }
      return;
    }
    ds.apps()
      .then(async (apps) => {
        if (!apps[0]) {
          return;
        }
        const q = openingQuery(apps[0], await buildsOf(apps[0]));
        if (q) {
          setQuery(q);
          show(q, true);
        } else {
          setQuery((old) => ({ ...old, app: apps[0] }));
        }
      })
      .catch((e) => setError(String(e)));
    // Only a query from the URL (a navigation) starts this; show's own update does not differ.
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [state.query, generation]);
  useEffect(() => {
    if (query.app) {
      buildsOf(query.app).then(setBuilds, () => setBuilds([]));
    }
  }, [query.app]);

  const choose = (p: Preset, base?: string) => {
    setPreset(p);
    const q = applyPreset(query, p, builds, base);
    if (q) {
      setQuery(q);
      show(q);
    }
  };
  const buildOptions = builds.filter((b) => b.runs > 0).map((b) => ({ value: b.name, label: b.name }));

  return (
    <Page title={s.serveTitle}>
      <div className={css({ padding: '8px 16px' })}>
        <QueryEditor query={query} datasource={ds} onChange={setQuery} onRunQuery={() => show(query)} />
        <div className={css({ display: 'flex', gap: 8, alignItems: 'center', flexWrap: 'wrap' })}>
          <Button
            icon="play"
            onClick={() => show(query)}
            disabled={running || !query.app}
            data-testid={selectors.report.run}
          >
            {running ? s.running : s.run}
          </Button>
          <div data-testid={selectors.report.preset}>
            <Select
              aria-label={s.preset}
              placeholder={s.preset}
              options={presetOptions}
              value={preset ?? null}
              onChange={(v) => v.value && (v.value === 'against' ? setPreset('against') : choose(v.value))}
              width={28}
            />
          </div>
          {preset === 'against' && (
            <div data-testid={selectors.report.presetBase}>
              <Select
                aria-label={s.presetBase}
                placeholder={s.presetBase}
                options={buildOptions}
                onChange={(v) => v.value && choose('against', v.value)}
                width={20}
              />
            </div>
          )}
        </div>
      </div>
      {error && <Alert title={error} severity="error" data-testid={selectors.report.error} />}
      {series && (
        <QuerierContext.Provider value={querier}>
          <Report
            key={`${generation}.${fresh}`}
            series={series}
            host={host}
            palette={state.palette ?? 'default'}
            onPalette={(palette) => update({ palette })}
          />
        </QuerierContext.Provider>
      )}
    </Page>
  );
}

/** resetView clears every key of the panel's view: a new query starts from the defaults. */
const resetView: PanelView = {
  mode: undefined,
  side: undefined,
  inverted: undefined,
  collapsed: undefined,
  normalize: undefined,
  significantOnly: undefined,
  search: undefined,
  row: undefined,
  zoom: undefined,
  drill: undefined,
  culprit: undefined,
  ...aroundPatch({}),
};

/** buildsOf lists an app's builds with their times and run counts, oldest first. */
function buildsOf(app: string): Promise<BuildInfo[]> {
  return call<BuildInfo[]>(`api/resources/builds?${new URLSearchParams({ app })}`);
}

mount(<Serve />);
