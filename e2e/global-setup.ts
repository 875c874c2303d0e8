import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { clickhouse, flamediff, flamediffBin, queryStored, repo, tempDir } from './backend';
import { FrameSet, checkoutModel, checkoutUnchanged } from './frames';
import { serve } from './server';

const panel = (f: string) => join('testdata/panel', f);
const pprof = (side: string) => [1, 2, 3].map((k) => `testdata/pprof/${side}-run${k}.pb.gz`);

/** SMALL_TREE is a maxNodes that leaves `other` nodes in the checkout diff, for drilling into. */
export const SMALL_TREE = 12;

/**
 * globalSetup produces every frame the tests mount, with the real backend,
 * and hands them to the workers as a JSON file (FLAMEDIFF_E2E_FRAMES). It
 * serves the harness page over HTTP (FLAMEDIFF_E2E_URL) until the run ends,
 * with POST /query answering the panel's own queries (focus, functions,
 * normalize) from the seeded ClickHouse, which also runs until then.
 */
export default async function globalSetup() {
  const dir = tempDir();
  const bin = flamediffBin(dir);
  const run = flamediff(dir, bin);
  const query = (args: string[]) => JSON.parse(run(['query', ...args, '--output', 'json']));
  const ch = await clickhouse(dir);
  const dsn = `clickhouse://${ch.addr}/e2e_${process.pid}_${Date.now()}`;
  run(['migrate', '--dsn', dsn]);
  run(['seed', '--dsn', dsn]);
  const stored = (model: object) =>
    JSON.parse(run(['query', '--dsn', dsn, '--model', JSON.stringify(model), '--output', 'json']));
  const server = await serve(repo, { '/query': (body) => queryStored(bin, dsn, body) });
  process.env.FLAMEDIFF_E2E_URL = `${server.url}/e2e/harness/index.html`;
  try {
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
      checkoutDiff: stored(checkoutModel()),
      checkoutSmall: stored(checkoutModel({ maxNodes: SMALL_TREE })),
      checkoutFunctions: stored(checkoutModel({ queryType: 'functions', variants: false })),
      checkoutRelative: stored(checkoutModel({ normalize: 'relative' })),
      checkoutRuns: stored(checkoutModel({ queryType: 'runs', variants: false })),
      checkoutRunsUnchanged: stored(checkoutModel({ queryType: 'runs', variants: false, ...checkoutUnchanged })),
      checkoutEvolution: stored({ queryType: 'evolution', app: 'checkout-service' }),
      iosEvolution: stored({ queryType: 'evolution', app: 'ios-app' }),
      checkoutChangepoints: stored({ queryType: 'changepoints', app: 'checkout-service' }),
    };
    const file = join(dir, 'frames.json');
    writeFileSync(file, JSON.stringify(frames));
    process.env.FLAMEDIFF_E2E_FRAMES = file;
  } catch (e) {
    await server.stop();
    ch.stop();
    throw e;
  }
  return async () => {
    await server.stop();
    ch.stop();
  };
}
