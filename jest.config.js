// force timezone to UTC to allow tests to work regardless of local timezone
// generally used by snapshots, but can affect specific tests
process.env.TZ = 'UTC';

const base = require('./.config/jest.config');
const swc = base.transform['^.+\\.(t|j)sx?$'];

module.exports = {
  // Jest configuration provided by Grafana scaffolding
  ...base,
  // d3-color, a dependency of @grafana/data 12, ships .mjs files only.
  transform: { ...base.transform, '^.+\\.mjs$': swc },
};
