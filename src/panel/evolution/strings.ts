/** UI strings of the evolution matrix view. */
export const evolutionStrings = {
  noData: 'No evolution data',
  badFrames: 'Cannot read the evolution frames',
  component: 'Component',
  expand: 'Expand',
  collapse: 'Collapse',
  time: 'Time',
  share: 'Share',
  change: 'Change vs previous build',
  noChange: 'no previous build',
  modified: 'Modified methods',
  added: 'Added methods',
  faster: 'faster',
  slower: 'slower',
  modifiedLegend: 'top box: modified methods 0 / <5 / <10 / ≥10',
  timeLegend: 'bottom box: time relative to the row’s largest',
  timelineTitle: (build: string) => `Execution timeline of ${build}: share of each component per time frame`,
  noTimeline: 'No timeline for this build',
  edgesTitle: (component: string, build: string) => `Calls ${build} added or removed around ${component}`,
  noEdges: 'No call edges added or removed by this build',
  callers: 'Callers',
  callees: 'Callees',
  addedEdge: 'added',
  removedEdge: 'removed',
  close: 'Close',
  frame: 'Time frame',
  more: (n: number) => `…and ${n} more`,
  changePoints: 'Change points starting at this build',
  appeared: 'new',
  changePointLegend: 'left bar: a significant change point starts at this build',
  noiseLegend: 'grey: change not significant across runs',
  pValue: 'p / q',
  significant: (yes: boolean) => (yes ? 'significant across runs' : 'not significant across runs'),
  matrixRole: 'evolution matrix',
  matrixLabel:
    "Performance evolution matrix. Arrow keys move between glyphs (left and right: builds, up and down: components), Home and End go to a component's first and last build, Enter shows the call edges the glyph's build added or removed, Escape closes the detail view or leaves the glyph.",
  glyphLabel: (g: {
    component: string;
    kind: string;
    build: string;
    time: string;
    share: string;
    change: string;
    modified: number;
    added: number;
    significance?: string;
    changePoint?: { count: number; function: string; change: string; slower: boolean };
  }) =>
    `${g.kind} ${g.component}, build ${g.build}: time ${g.time}, share ${g.share}, change ${g.change}` +
    `${g.significance ? ` (${g.significance})` : ''}, ` +
    `${g.modified} modified and ${g.added} added methods` +
    (g.changePoint
      ? `; ${g.changePoint.count > 1 ? `${g.changePoint.count} change points start here, the largest` : 'change point starts here'}: ` +
        `${g.changePoint.function} ${g.changePoint.change} (${g.changePoint.slower ? 'slower' : 'faster'})`
      : ''),
};

/** data-testid values of the evolution view, shared with the browser tests. */
export const evolutionSelectors = {
  root: 'evolution-root',
  matrix: 'evolution-matrix',
  row: 'evolution-row',
  toggle: 'evolution-toggle',
  build: 'evolution-build',
  glyph: 'evolution-glyph',
  top: 'evolution-glyph-top',
  bottom: 'evolution-glyph-bottom',
  tooltip: 'evolution-tooltip',
  changeList: 'evolution-change-list',
  timeline: 'evolution-timeline',
  timelineRow: 'evolution-timeline-row',
  edges: 'evolution-edges',
  edge: 'evolution-edge',
  edgeLine: 'evolution-edge-line',
  close: 'evolution-close',
  legend: 'evolution-legend',
  changePoint: 'evolution-change-point',
  changePointList: 'evolution-change-point-list',
  focus: 'evolution-glyph-focus',
  live: 'evolution-live',
  significantOnly: 'evolution-significant-only',
};
