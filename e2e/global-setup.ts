import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { clickhouse, flamediff, repo, tempDir } from './backend';
import { FrameSet } from './frames';
import { serve } from './server';

const panel = (f: string) => join('testdata/panel', f);
const pprof = (side: string) => [1, 2, 3].map((k) => `testdata/pprof/${side}-run${k}.pb.gz`);

/** The comparison used by the screenshots and the run details tests. */
export const checkout = { app: 'checkout-service', base: '1.6.0', head: '1.7.0' };

/**
 * globalSetup produces every frame the tests mount, with the real backend,
 * and hands them to the workers as a JSON file (FLAMEDIFF_E2E_FRAMES); it
 * serves the harness page over HTTP (FLAMEDIFF_E2E_URL) until the run ends.
 */
export default async function globalSetup() {
  const server = await serve(repo);
  process.env.FLAMEDIFF_E2E_URL = `${server.url}/e2e/harness/index.html`;
  const dir = tempDir();
  const run = flamediff(dir);
  const query = (args: string[]) => JSON.parse(run(['query', ...args, '--output', 'json']));
  const ch = await clickhouse(dir);
  try {
    const dsn = `clickhouse://${ch.addr}/e2e_${process.pid}_${Date.now()}`;
    run(['migrate', '--dsn', dsn]);
    run(['seed', '--dsn', dsn]);
    const stored = (model: object) =>
      JSON.parse(run(['query', '--dsn', dsn, '--model', JSON.stringify(model), '--output', 'json']));
    const sides = { head: { builds: [checkout.head], runs: [] }, base: { builds: [checkout.base], runs: [] } };
    const frames: FrameSet = {
      panelDiff: query([
        '--type',
        'diff',
        '--base',
        panel('base.folded'),
        '--head',
        panel('head.folded'),
        '--variants',
      ]),
      panelSingle: query(['--type', 'flamegraph', '--head', panel('head.folded')]),
      pprofDiff: query(['--type', 'diff', '--base', ...pprof('base'), '--head', ...pprof('head'), '--variants']),
      checkoutDiff: stored({ queryType: 'diff', app: checkout.app, ...sides, variants: true, maxNodes: 20000 }),
      checkoutRuns: stored({ queryType: 'runs', app: checkout.app, ...sides }),
    };
    const file = join(dir, 'frames.json');
    writeFileSync(file, JSON.stringify(frames));
    process.env.FLAMEDIFF_E2E_FRAMES = file;
  } finally {
    ch.stop();
  }
  return server.stop;
}
