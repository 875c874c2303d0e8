import { createContext } from 'react';
import { from, lastValueFrom } from 'rxjs';

import { DataFrame, DataQueryRequest, DataQueryResponse, PanelData } from '@grafana/data';
import { getDataSourceSrv, getTemplateSrv, locationService } from '@grafana/runtime';

import { isFlame } from '../datasource/queryTypes';
import type { FlamediffQuery } from '../datasource/types';
import { Around, aroundKeys, aroundOf, aroundPatch } from './model/around';

/**
 * Querier runs the panel's own flame graph query again with some fields of
 * the query model changed: `focus` to drill into a subtree, `queryType:
 * functions` for the top table, `normalize` when the other normalisation is
 * not at hand. It resolves to the answer's frames.
 */
export type Querier = (patch: Partial<FlamediffQuery>) => Promise<DataFrame[]>;

/**
 * QuerierContext lets a host other than Grafana (the browser-test harness)
 * answer the panel's queries; in Grafana it is unset and grafanaQuerier is used.
 */
export const QuerierContext = createContext<Querier | undefined>(undefined);

/** flameTarget is the panel's first flamegraph or diff query. */
function flameTarget(data: PanelData): FlamediffQuery | undefined {
  return data.request?.targets.find((t) => isFlame((t as FlamediffQuery).queryType)) as FlamediffQuery | undefined;
}

/**
 * askedByQuery is what the panel's flame graph query asked around a culprit
 * (sandwich, filters, only), its dashboard variables replaced: its frames
 * answer that ask. Outside Grafana (no template service) nothing.
 */
export function askedByQuery(data: PanelData): Around {
  const target = flameTarget(data);
  // Outside Grafana (the report, serve, the harness) there is no template service.
  const srv = getTemplateSrv();
  if (!target || !srv) {
    return {};
  }
  const raw = (v?: string) => (v ? srv.replace(v, data.request?.scopedVars, 'raw') : v);
  return aroundOf(Object.fromEntries(aroundKeys.map((k) => [k, raw(target[k])])));
}

/**
 * grafanaQuerier re-issues the panel's first flamegraph or diff query through
 * its data source (which applies the dashboard variables as for the panel's
 * own query); undefined when the panel's data did not come from such a query.
 */
export function grafanaQuerier(data: PanelData): Querier | undefined {
  const request = data.request;
  const target = flameTarget(data);
  if (!request || !target) {
    return undefined;
  }
  return async (patch) => {
    const ds = await getDataSourceSrv().get(target.datasource ?? undefined);
    const req: DataQueryRequest<FlamediffQuery> = {
      ...(request as DataQueryRequest<FlamediffQuery>),
      requestId: `${request.requestId}-flamediff-${JSON.stringify(patch)}`,
      targets: [{ ...target, ...patch }],
    };
    const res: DataQueryResponse = await lastValueFrom(from(ds.query(req)));
    const err = res.errors?.[0] ?? res.error;
    if (err) {
      throw new Error(err.message ?? String(err));
    }
    return res.data as DataFrame[];
  };
}

/** NORMALIZE_VAR is the dashboard variable that keeps the normalisation choice. */
export const NORMALIZE_VAR = 'normalize';

/**
 * keepVariables writes values into the dashboard variables of those names
 * the dashboard has (and so into its URL, var-NAME), so that a reload or a
 * shared link shows the same view; a query whose model says "$NAME" follows
 * them. An undefined value empties the variable. replace keeps the history
 * entry.
 */
export function keepVariables(values: Record<string, string | undefined>, replace: boolean): void {
  // Outside Grafana (the test harness) there is no template service.
  const names = new Set(
    getTemplateSrv()
      ?.getVariables()
      .map((v) => v.name) ?? []
  );
  const patch = Object.fromEntries(
    Object.entries(values)
      .filter(([name]) => names.has(name))
      .map(([name, v]) => [`var-${name}`, v ?? ''])
  );
  if (Object.keys(patch).length > 0) {
    locationService.partial(patch, replace);
  }
}

/** keepNormalization keeps the normalisation choice in var-normalize (see keepVariables). */
export function keepNormalization(value: string): void {
  keepVariables({ [NORMALIZE_VAR]: value }, true);
}

/**
 * keepAround keeps an ask around a culprit in the dashboard variables named
 * as the query fields (var-sandwich, var-keep, var-drop, var-hideFrames,
 * var-showFrom, var-only), adding a history entry.
 */
export function keepAround(a: Around): void {
  keepVariables(aroundPatch(a), false);
}
