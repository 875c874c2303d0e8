// The script of `flamediff report`'s page: the frames and the title are
// inline in the page (#flamediff-data, written by pkg/web), nothing is fetched.
import React from 'react';

import { DataFrameJSON, dataFrameFromJSON } from '@grafana/data';

import { mount } from './mount';
import { Page, Report } from './components/Report';

/** What pkg/web writes into #flamediff-data. */
interface ReportData {
  title: string;
  subtitle?: string;
  frames: DataFrameJSON[];
}

const data: ReportData = JSON.parse(document.getElementById('flamediff-data')!.textContent!);
mount(
  <Page title={data.title} header={data.subtitle && <span>{data.subtitle}</span>}>
    <Report series={data.frames.map(dataFrameFromJSON)} />
  </Page>
);
