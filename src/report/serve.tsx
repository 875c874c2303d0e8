// The script of `flamediff serve`'s page: the data source's query editor on
// top (its pickers read GET /api/resources/...), the panel below (frames
// from POST /api/query), both answered by the same Go code as in Grafana.
import { css } from '@emotion/css';
import React, { useCallback, useEffect, useMemo, useState } from 'react';

import { DataFrame, DataSourceInstanceSettings, DataFrameJSON, dataFrameFromJSON } from '@grafana/data';
import { Alert, Button } from '@grafana/ui';

import { QueryEditor } from '../datasource/components/QueryEditor';
import { FlamediffDataSource } from '../datasource/datasource';
import { FlamediffOptions, FlamediffQuery, defaultQuery } from '../datasource/types';
import { selectors } from '../selectors';
import { strings } from '../strings';
import { Querier, QuerierContext } from '../panel/query';
import { mount } from './mount';
import { Page, Report } from './components/Report';

const s = strings.report;

/** call GETs path, or POSTs body as JSON (the server refuses any other type). */
async function call<T>(path: string, body?: object): Promise<T> {
  const res = await fetch(
    path,
    body && { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) }
  );
  const answer = await res.json();
  if (!res.ok) {
    throw new Error(answer?.error ?? `${res.status} ${res.statusText}`);
  }
  return answer as T;
}

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

function Serve() {
  const [query, setQuery] = useState<FlamediffQuery>({ refId: 'A', ...defaultQuery } as FlamediffQuery);
  const [series, setSeries] = useState<DataFrame[]>();
  const [error, setError] = useState<string>();
  const [running, setRunning] = useState(false);
  // The panel's own queries (drill-down, the functions table, the other
  // normalisation) go to the same endpoint with the shown query patched.
  const [shown, setShown] = useState<FlamediffQuery>();
  const querier = useMemo<Querier | undefined>(
    () =>
      shown &&
      (async (patch) => (await call<DataFrameJSON[]>('api/query', { ...shown, ...patch })).map(dataFrameFromJSON)),
    [shown]
  );
  const run = useCallback(async () => {
    setRunning(true);
    setError(undefined);
    try {
      const frames = await call<DataFrameJSON[]>('api/query', query);
      setSeries(frames.map(dataFrameFromJSON));
      setShown(query);
    } catch (e) {
      setError(e instanceof Error ? e.message : String(e));
    } finally {
      setRunning(false);
    }
  }, [query]);
  // The first app, so that the page opens on something to pick builds of.
  useEffect(() => {
    ds.apps().then((apps) => apps[0] && setQuery((q) => (q.app ? q : { ...q, app: apps[0] })), setError);
  }, []);
  return (
    <Page title={s.serveTitle}>
      <div className={css({ padding: '8px 16px' })}>
        <QueryEditor query={query} datasource={ds} onChange={setQuery} onRunQuery={run} />
        <Button icon="play" onClick={run} disabled={running || !query.app} data-testid={selectors.report.run}>
          {running ? s.running : s.run}
        </Button>
      </div>
      {error && <Alert title={error} severity="error" data-testid={selectors.report.error} />}
      {series && (
        <QuerierContext.Provider value={querier}>
          <Report series={series} />
        </QuerierContext.Provider>
      )}
    </Page>
  );
}

mount(<Serve />);
