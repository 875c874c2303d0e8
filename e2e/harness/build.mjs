// Bundles a browser-test harness page's script: by default the panel harness
// (e2e/harness/main.tsx into e2e/harness/dist/harness.js); with two
// arguments, ENTRY into OUTFILE (the evolution harness uses that).
import { build } from 'esbuild';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const require = createRequire(import.meta.url);
// @grafana/flamegraph 11 nests its own React; one React per page or hooks break.
const react = dirname(require.resolve('react/package.json'));

await build({
  entryPoints: [process.argv[2] ?? join(here, 'main.tsx')],
  outfile: process.argv[3] ?? join(here, 'dist', 'harness.js'),
  bundle: true,
  format: 'iife',
  platform: 'browser',
  target: 'chrome120',
  jsx: 'automatic',
  minify: true,
  sourcemap: false,
  logLevel: 'warning',
  alias: {
    react,
    'react/jsx-runtime': join(react, 'jsx-runtime.js'),
    // For Grafana's Table (the evolution harness): see scrollbars.ts.
    'react-custom-scrollbars-2': join(here, 'scrollbars.ts'),
  },
  define: { 'process.env.NODE_ENV': '"production"', global: 'window' },
  loader: { '.svg': 'text', '.woff': 'empty', '.woff2': 'empty', '.ttf': 'empty', '.png': 'empty' },
});
