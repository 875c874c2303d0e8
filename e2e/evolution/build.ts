// Bundles the evolution harness (main.tsx) into dist/evolution.js, loaded by
// index.html, with the panel harness's bundler settings.
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';

/** buildHarness bundles the harness; the spec runs it before mounting. */
export async function buildHarness(): Promise<void> {
  execFileSync(
    process.execPath,
    [join(__dirname, '..', 'harness', 'build.mjs'), join(__dirname, 'main.tsx'), join(__dirname, 'dist', 'evolution.js')],
    { stdio: 'inherit' }
  );
}
