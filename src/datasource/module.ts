import { DataSourcePlugin } from '@grafana/data';

import { ConfigEditor } from './components/ConfigEditor';
import { QueryEditor } from './components/QueryEditor';
import { FlamediffDataSource } from './datasource';
import { FlamediffOptions, FlamediffQuery, FlamediffSecureOptions } from './types';

/** The flamediff-clickhouse-datasource plugin. */
export const plugin = new DataSourcePlugin<
  FlamediffDataSource,
  FlamediffQuery,
  FlamediffOptions,
  FlamediffSecureOptions
>(FlamediffDataSource)
  .setConfigEditor(ConfigEditor)
  .setQueryEditor(QueryEditor);
