// Imported first by the report's and serve's scripts: @grafana/runtime reads
// Grafana's boot data when it loads and logs an error without it. These
// pages have no Grafana server; this is the empty data it falls back to.
const w = window as unknown as { grafanaBootData?: object };
w.grafanaBootData ??= { assets: { dark: '', light: '' }, settings: {}, user: {}, navTree: [] };
