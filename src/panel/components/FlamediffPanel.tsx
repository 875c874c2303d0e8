import React, { useContext, useMemo, useState } from 'react';

import { PanelProps, SelectableValue } from '@grafana/data';
import { Alert, RadioButtonGroup } from '@grafana/ui';

import { selectors } from '../../selectors';
import { strings } from '../../strings';
import { EvolutionView, isEvolutionData } from '../evolution';
import { isRunsFrame, isSummaryFrame, parseRuns, parseSummary, runsUnit } from '../model/runs';
import { isFlameFrame } from '../model/flameData';
import { QuerierContext, askedByQuery, grafanaQuerier, keepAround } from '../query';
import { PanelOptions } from '../types';
import { ViewContext } from '../viewState';
import { AroundView } from './Around';
import { RunDetails } from './RunDetails';

type Mode = 'flame' | 'runs';
const MODE_HEIGHT = 36;

/**
 * FlamediffPanel draws whatever its query returned: the evolution matrix for
 * evolution frames, otherwise flame graph frames (all variants), runs frames,
 * or both with a switch between them.
 */
export function FlamediffPanel(props: PanelProps<PanelOptions>) {
  const { data, options, width, height } = props;
  if (isEvolutionData(data.series)) {
    return <EvolutionView series={data.series} width={width} height={height} options={options} />;
  }
  return <FlameOrRuns {...props} />;
}

/** FlameOrRuns is the panel for flame graph and runs frames. */
function FlameOrRuns({ data, options, width, height }: PanelProps<PanelOptions>) {
  const hasFlame = useMemo(() => data.series.some(isFlameFrame), [data.series]);
  const fromHost = useContext(QuerierContext);
  const querier = useMemo(() => fromHost ?? grafanaQuerier(data), [fromHost, data]);
  const asked = useMemo(() => askedByQuery(data), [data]);
  const runs = useMemo(() => {
    const runsFrame = data.series.find(isRunsFrame);
    const summaryFrame = data.series.find(isSummaryFrame);
    try {
      return runsFrame
        ? {
            runs: parseRuns(runsFrame),
            unit: runsUnit(runsFrame),
            summary: summaryFrame ? parseSummary(summaryFrame) : undefined,
          }
        : undefined;
    } catch (e) {
      return { error: e instanceof Error ? e.message : String(e) };
    }
  }, [data.series]);
  const host = useContext(ViewContext);
  const [mode, setModeState] = useState<Mode>(host?.view.mode ?? 'flame');
  const setMode = (m: Mode) => {
    setModeState(m);
    host?.onChange({ mode: m });
  };

  if (!hasFlame && !runs) {
    return <Alert title={strings.panel.noData} severity="info" />;
  }
  const both = hasFlame && runs !== undefined;
  const shown: Mode = !hasFlame ? 'runs' : !runs ? 'flame' : mode;
  const innerHeight = both ? height - MODE_HEIGHT : height;
  const modes: Array<SelectableValue<Mode>> = [
    { value: 'flame', label: strings.panel.flameGraph },
    { value: 'runs', label: strings.panel.runs },
  ];

  return (
    <div style={{ width, height, overflow: 'hidden' }}>
      {both && (
        <div data-testid={selectors.panel.mode} style={{ height: MODE_HEIGHT }}>
          <RadioButtonGroup size="sm" options={modes} value={shown} onChange={setMode} />
        </div>
      )}
      {shown === 'flame' && (
        <AroundView
          series={data.series}
          querier={querier}
          options={options}
          width={width}
          height={innerHeight}
          asked={asked}
          onAsk={keepAround}
        />
      )}
      {shown === 'runs' && runs && 'error' in runs && (
        <Alert title={strings.panel.badFrame} severity="error" data-testid={selectors.panel.error}>
          {runs.error}
        </Alert>
      )}
      {shown === 'runs' && runs && 'runs' in runs && runs.runs && (
        <RunDetails runs={runs.runs} summary={runs.summary} unit={runs.unit} width={width} />
      )}
    </div>
  );
}
