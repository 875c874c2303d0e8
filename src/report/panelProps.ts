import { DataFrame, LoadingState, PanelProps, getDefaultTimeRange } from '@grafana/data';

import { PanelOptions } from '../panel/types';

/**
 * panelProps gives the panel what Grafana would, for pages that mount it
 * without Grafana (the report, the local web UI, the browser-test harness).
 * Only the fields the panel reads are real; the rest satisfy the type.
 */
export function panelProps(
  series: DataFrame[],
  options: PanelOptions,
  width: number,
  height: number
): PanelProps<PanelOptions> {
  const timeRange = getDefaultTimeRange();
  return {
    id: 1,
    data: { series, state: LoadingState.Done, timeRange },
    timeRange,
    timeZone: 'utc',
    options,
    transparent: false,
    width,
    height,
    fieldConfig: { defaults: {}, overrides: [] },
    renderCounter: 0,
    title: 'Flamediff',
    eventBus: undefined as never,
    onOptionsChange: () => undefined,
    onFieldConfigChange: () => undefined,
    replaceVariables: (s: string) => s,
    onChangeTimeRange: () => undefined,
  } as PanelProps<PanelOptions>;
}
