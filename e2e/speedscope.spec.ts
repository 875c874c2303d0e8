// Speedscope files written by `flamediff query --output speedscope` and
// `flamediff export --output speedscope`: they validate against the schema
// the speedscope npm package ships, and its own app opens them.
import { expect, test } from '@playwright/test';
import Ajv from 'ajv';
import { execFileSync } from 'node:child_process';
import { cpSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { ClickHouse, buildGo, clickhouse, repo, tempDir } from './backend';
import { serve } from './server';

const release = join(repo, 'node_modules/speedscope/dist/release');
const pprof = (side: string) => [1, 2, 3].map((k) => `testdata/pprof/${side}-run${k}.pb.gz`);

let dir: string;
let ch: ClickHouse | undefined;
let files: Record<string, string>;

test.beforeAll(async () => {
  dir = tempDir();
  const bin = buildGo('./cmd/flamediff', dir);
  const run = (args: string[]) => execFileSync(bin, args, { cwd: repo, maxBuffer: 1 << 30, encoding: 'utf8' });
  ch = await clickhouse(dir);
  const dsn = `clickhouse://${ch.addr}/speedscope_${process.pid}_${Date.now()}`;
  run(['migrate', '--dsn', dsn]);
  for (const file of pprof('head')) {
    run(['ingest', '--dsn', dsn, '--app', 'go', '--build', '1', '--run', file, file]);
  }
  files = {
    diff: run([
      'query',
      '--type',
      'diff',
      '--base',
      ...pprof('base'),
      '--head',
      ...pprof('head'),
      '--output',
      'speedscope',
    ]),
    flamegraph: run(['query', '--type', 'flamegraph', '--head', ...pprof('head'), '--output', 'speedscope']),
    build: run(['export', '--dsn', dsn, '--app', 'go', '--build', '1', '--output', 'speedscope']),
  };
});

test.afterAll(() => ch?.stop());

test('exported files validate against speedscope’s file format schema', () => {
  const schema = JSON.parse(readFileSync(join(release, 'file-format-schema.json'), 'utf8'));
  const validate = new Ajv({ allErrors: true }).compile(schema);
  for (const [name, text] of Object.entries(files)) {
    const file = JSON.parse(text);
    expect(validate(file), `${name}: ${JSON.stringify(validate.errors)}`).toBe(true);
    expect(file.profiles).toHaveLength(name === 'diff' ? 2 : 1);
    for (const p of file.profiles) {
      expect(p.samples.length).toBeGreaterThan(100);
      expect(p.samples).toHaveLength(p.weights.length);
    }
  }
  // A file the schema refuses: the check can fail.
  expect(validate({ ...JSON.parse(files.flamegraph), profiles: [{ type: 'sampled', unit: 'parsecs' }] })).toBe(false);
});

test('speedscope opens an exported diff', async ({ page }) => {
  const root = join(dir, 'speedscope');
  cpSync(release, root, { recursive: true });
  writeFileSync(join(root, 'diff.json'), files.diff);
  const server = await serve(root);
  const dialogs: string[] = [];
  page.on('dialog', (d) => {
    dialogs.push(d.message());
    void d.dismiss();
  });
  try {
    await page.goto(`${server.url}/index.html#profileURL=${encodeURIComponent(`${server.url}/diff.json`)}`);
    // speedscope's app is a 4 MB script: give a loaded machine time to run it
    await expect(page.getByText('head (1/2)')).toBeVisible({ timeout: 30_000 });
    await expect(page.locator('canvas').first()).toBeVisible();
    expect(dialogs).toEqual([]);
  } finally {
    await server.stop();
  }
});
