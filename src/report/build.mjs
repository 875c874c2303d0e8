// Builds the scripts `flamediff report` and `flamediff serve` embed
// (pkg/web/dist/*.gz, gzipped: the page inflates them, which keeps a report
// a third of the size) and the checksum of their sources that pkg/web's
// test compares, so a change to the panel without a rebuild fails the tests.
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

import { bundle, pageStartup } from '../../scripts/bundle.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const repo = join(here, '..', '..');
const dist = join(repo, 'pkg', 'web', 'dist');

// The page cannot fetch @grafana/ui's icons from Grafana: draw them inline.
const alias = {
  'react-inlinesvg': join(here, 'icons.tsx'),
  'grafana-icons': join(repo, 'node_modules', '@grafana', 'ui', 'dist', 'public', 'img', 'icons'),
};
rmSync(dist, { recursive: true, force: true });
mkdirSync(dist, { recursive: true });
// first.js draws the diff before the page's main script runs (first.ts).
for (const page of ['first', 'report', 'serve']) {
  const entry = join(here, page === 'first' ? 'first.ts' : `${page}.tsx`);
  const out = await bundle(entry, join(dist, `${page}.js`), { alias, write: false, plugins: pageStartup });
  for (const file of out.outputFiles) {
    // Both pages import the same stylesheets (@grafana/ui's): keep one copy.
    const name = file.path.endsWith('.css') ? 'page.css' : `${page}.js`;
    writeFileSync(join(dist, name + '.gz'), gzipSync(file.contents, { level: 9 }));
  }
}
writeFileSync(join(dist, 'sources.sha256'), sourcesHash() + '\n');

/**
 * sourcesHash is sha256 over every bundled source file (sorted by path):
 * src/**\/*.{ts,tsx,svg} except tests, this script, scripts/bundle.mjs and
 * package-lock.json, each as "path\0content\0". pkg/web/dist_test.go
 * computes the same.
 */
function sourcesHash() {
  const files = [
    ...walk(join(repo, 'src')).filter((f) => /\.(ts|tsx|svg)$/.test(f) && !/\.test\.tsx?$/.test(f)),
    join(here, 'build.mjs'),
    join(repo, 'scripts', 'bundle.mjs'),
    join(repo, 'package-lock.json'),
  ]
    .map((f) => relative(repo, f).split('\\').join('/'))
    .sort();
  const h = createHash('sha256');
  for (const f of files) {
    h.update(f + '\0');
    h.update(readFileSync(join(repo, f)));
    h.update('\0');
  }
  return h.digest('hex');
}

function walk(dir) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? walk(join(dir, e.name)) : e.isFile() ? [join(dir, e.name)] : []
  );
}
