// Bundles a page that runs the panel's code outside Grafana (the browser-test
// harness, the report and the local web UI) into one browser script.
import { build } from 'esbuild';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

const require = createRequire(import.meta.url);
// @grafana/flamegraph 11 nests its own React; one React per page or hooks break.
const react = dirname(require.resolve('react/package.json'));

/** bundle writes entry and everything it imports into outfile (IIFE, minified); extra adds esbuild options. */
export function bundle(entry, outfile, extra = {}) {
  return build({
    entryPoints: [entry],
    outfile,
    bundle: true,
    format: 'iife',
    platform: 'browser',
    target: 'chrome120',
    jsx: 'automatic',
    minify: true,
    sourcemap: false,
    logLevel: 'warning',
    define: { 'process.env.NODE_ENV': '"production"', global: 'window' },
    loader: { '.svg': 'text', '.woff': 'empty', '.woff2': 'empty', '.ttf': 'empty', '.png': 'empty' },
    ...extra,
    alias: { react, 'react/jsx-runtime': join(react, 'jsx-runtime.js'), ...extra.alias },
  });
}
