// Bundles the evolution harness (main.tsx) into dist/evolution.js, loaded by
// index.html over file://.
import { build } from 'esbuild';
import { dirname, join } from 'node:path';

/** buildHarness bundles the harness; the spec runs it before mounting. */
export async function buildHarness(): Promise<void> {
  // One React per page: packages that nest their own copy would break hooks.
  const react = dirname(require.resolve('react/package.json'));
  await build({
    entryPoints: [join(__dirname, 'main.tsx')],
    outfile: join(__dirname, 'dist', 'evolution.js'),
    bundle: true,
    format: 'iife',
    platform: 'browser',
    target: 'chrome120',
    jsx: 'automatic',
    minify: true,
    logLevel: 'warning',
    alias: { react, 'react/jsx-runtime': join(react, 'jsx-runtime.js') },
    define: { 'process.env.NODE_ENV': '"production"', global: 'window' },
    loader: { '.svg': 'text', '.woff': 'empty', '.woff2': 'empty', '.ttf': 'empty', '.png': 'empty', '.css': 'empty' },
  });
}
