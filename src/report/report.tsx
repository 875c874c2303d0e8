// The script of `flamediff report`'s page: the frames and the title are
// inline in the page (#flamediff-data, written by pkg/web), nothing is fetched.
import './boot';
import React from 'react';

import { DataFrameJSON, dataFrameFromJSON } from '@grafana/data';

import { handoff } from './handoff';
import { mount } from './mount';
import { Page, Report } from './components/Report';
import { usePageState } from './usePageState';

/** What pkg/web writes into #flamediff-data. */
interface ReportData {
  title: string;
  subtitle?: string;
  frames: DataFrameJSON[];
}

// The first-paint script has parsed it already, unless it failed.
const data = (handoff().reportData ??
  JSON.parse(document.getElementById('flamediff-data')!.textContent!)) as ReportData;
const series = data.frames.map(dataFrameFromJSON);

/** ReportPage keeps its view in the URL's fragment: a link to the file reopens it. */
function ReportPage() {
  const { state, generation, host, update } = usePageState();
  return (
    <Page title={data.title} header={data.subtitle && <span>{data.subtitle}</span>}>
      <Report
        key={generation}
        series={series}
        host={host}
        palette={state.palette ?? 'default'}
        onPalette={(palette) => update({ palette })}
      />
    </Page>
  );
}

mount(<ReportPage />);
