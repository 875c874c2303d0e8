import { createContext } from 'react';
import { from, lastValueFrom } from 'rxjs';

import { DataFrame, DataQueryRequest, DataQueryResponse, PanelData } from '@grafana/data';
import { getDataSourceSrv, getTemplateSrv, locationService } from '@grafana/runtime';

import { isFlame } from '../datasource/queryTypes';
import type { FlamediffQuery } from '../datasource/types';

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


/**
 * grafanaQuerier re-issues the panel's first flamegraph or diff query through
 * its data source (which applies the dashboard variables as for the panel's
 * own query); undefined when the panel's data did not come from such a query.
 */
export function grafanaQuerier(data: PanelData): Querier | undefined {
  const request = data.request;
  const target = request?.targets.find((t) => isFlame((t as FlamediffQuery).queryType)) as FlamediffQuery | undefined;
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
 * keepNormalization writes the choice into the dashboard variable (and so the
 * URL, var-normalize) when the dashboard has one, so that a reload or a shared
 * link shows the same normalisation; a query whose model says
 * "normalize": "$normalize" follows it.
 */
export function keepNormalization(value: string): void {
  // Outside Grafana (the test harness) there is no template service.
  if (
    getTemplateSrv()
      ?.getVariables()
      .some((v) => v.name === NORMALIZE_VAR)
  ) {
    locationService.partial({ [`var-${NORMALIZE_VAR}`]: value }, true);
  }
}
