import { AppPlugin } from '@grafana/data';

/**
 * The flamediff-flamediff-app plugin: a wrapper with no pages of its own that
 * ships the nested data source (src/datasource) and panel (src/panel).
 */
export const plugin = new AppPlugin<{}>();
