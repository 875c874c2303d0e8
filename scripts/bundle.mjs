// Bundles a page that runs the panel's code outside Grafana (the browser-test
// harness, the report and the local web UI) into one browser script.
import { build } from 'esbuild';
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

const require = createRequire(import.meta.url);
// @grafana/flamegraph 11 nests its own React; one React per page or hooks break.
const react = dirname(require.resolve('react/package.json'));

/**
 * noExtraThemes: @grafana/data's theme registry validates its twelve extra
 * themes (aubergine, tron, ...) with zod as it loads, a tenth of these pages'
 * start-up; they offer only dark and light, so the registry gets none. The
 * build fails if the registry's source no longer reads as expected.
 */
const noExtraThemes = {
  name: 'no-extra-themes',
  setup(b) {
    b.onLoad({ filter: /@grafana[\\/]data[\\/]dist[\\/]esm[\\/]themes[\\/]registry\.mjs$/ }, async (args) => {
      const src = await readFile(args.path, 'utf8');
      const trimmed = src.replace(/const extraThemes = \{[^}]*\};/, 'const extraThemes = {};');
      if (trimmed === src) {
        throw new Error(`${args.path}: no extraThemes to leave out (has @grafana/data changed?)`);
      }
      return { contents: trimmed, loader: 'js', resolveDir: dirname(args.path) };
    });
  },
};

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
    plugins: [noExtraThemes, ...(extra.plugins ?? [])],
    alias: { react, 'react/jsx-runtime': join(react, 'jsx-runtime.js'), ...extra.alias },
  });
}
