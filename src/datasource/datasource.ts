import { DataSourceInstanceSettings, MetricFindValue, ScopedVars } from '@grafana/data';
import { DataSourceWithBackend, getTemplateSrv } from '@grafana/runtime';

import { names } from './resources';
import { FlamediffOptions, FlamediffQuery, Selection, defaultQuery } from './types';

// Multi-value variables expand into several names: join them with a
// separator no name contains, then split.
const SEP = '\u001f';
const joinValues = (value: unknown) => (Array.isArray(value) ? value.join(SEP) : String(value));

/**
 * FlamediffDataSource sends queries to the Go backend and reads its resources
 * for the query editor's pickers and for template variables.
 */
export class FlamediffDataSource extends DataSourceWithBackend<FlamediffQuery, FlamediffOptions> {
  constructor(settings: DataSourceInstanceSettings<FlamediffOptions>) {
    super(settings);
  }

  getDefaultQuery(): Partial<FlamediffQuery> {
    return defaultQuery;
  }

  /** Queries without an app cannot return anything: do not send them. */
  filterQuery(query: FlamediffQuery): boolean {
    return Boolean(query.app) && !query.hide;
  }

  /** applyTemplateVariables interpolates the app, builds, runs, function, normalisation, sandwich, filters and only. */
  applyTemplateVariables(query: FlamediffQuery, scopedVars: ScopedVars): FlamediffQuery {
    const srv = getTemplateSrv();
    const one = (v?: string) => (v ? srv.replace(v, scopedVars) : v);
    const raw = (v?: string) => (v ? srv.replace(v, scopedVars, 'raw') || undefined : v);
    const many = (list?: string[]) =>
      (list ?? []).flatMap((v) => srv.replace(v, scopedVars, joinValues).split(SEP)).filter((v) => v !== '');
    const sel = (s?: Selection): Selection => ({ builds: many(s?.builds), runs: many(s?.runs) });
    return {
      ...query,
      app: one(query.app) ?? '',
      profileType: one(query.profileType),
      function: one(query.function),
      normalize: one(query.normalize),
      // Regular expressions: a variable's value goes in as typed, unescaped.
      sandwich: raw(query.sandwich),
      keep: raw(query.keep),
      drop: raw(query.drop),
      hideFrames: raw(query.hideFrames),
      showFrom: raw(query.showFrom),
      only: raw(query.only),
      head: sel(query.head),
      base: sel(query.base),
      builds: many(query.builds),
    };
  }

  /** apps lists the apps that have runs. */
  async apps(): Promise<string[]> {
    return names(await this.getResource('apps'));
  }

  /** builds lists an app's builds. */
  async builds(app: string): Promise<string[]> {
    return names(await this.getResource('builds', { app }));
  }

  /** runs lists the runs of one build. */
  async runs(app: string, build: string): Promise<string[]> {
    return names(await this.getResource('runs', { app, build }));
  }

  /** functions searches an app's function names. */
  async functions(app: string, q: string): Promise<string[]> {
    return names(await this.getResource('functions', { app, q }));
  }

  /**
   * metricFindQuery feeds template variables: "apps", "builds APP" or
   * "runs APP BUILD" (each word may be a variable).
   */
  async metricFindQuery(query: string, options?: { scopedVars?: ScopedVars }): Promise<MetricFindValue[]> {
    const [kind, ...args] = getTemplateSrv().replace(query, options?.scopedVars).trim().split(/\s+/);
    let list: string[];
    switch (kind) {
      case 'apps':
        list = await this.apps();
        break;
      case 'builds':
        list = args[0] ? await this.builds(args[0]) : [];
        break;
      case 'runs':
        list = args.length >= 2 ? await this.runs(args[0], args[1]) : [];
        break;
      default:
        throw new Error(`unknown variable query ${JSON.stringify(kind)}: use "apps", "builds APP" or "runs APP BUILD"`);
    }
    return list.map((text) => ({ text }));
  }
}
