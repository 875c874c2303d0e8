// force timezone to UTC to allow tests to work regardless of local timezone
// generally used by snapshots, but can affect specific tests
process.env.TZ = 'UTC';

const base = require('./.config/jest.config');
const { grafanaESModules, nodeModulesToTransform } = require('./.config/jest/utils');
const swc = base.transform['^.+\\.(t|j)sx?$'];

module.exports = {
  // Jest configuration provided by Grafana scaffolding
  ...base,
  moduleNameMapper: {
    ...base.moduleNameMapper,
    // @grafana/ui 13 imports react-dom/server (TruncatedText); under jsdom
    // jest picks React 19's browser build, which opens a MessageChannel as
    // it loads, and jsdom has none. The Node build renders the same.
    '^react-dom/server$': 'react-dom/server.node',
  },
  // Grafana 13's packages bring dependencies that ship ES modules only.
  transformIgnorePatterns: [nodeModulesToTransform([...grafanaESModules, '@react-hookz', '@ver0'])],
  // d3-color, a dependency of @grafana/data, ships .mjs files only.
  transform: { ...base.transform, '^.+\\.mjs$': swc },
};
