// The call tree in `flamediff report` opened from disk and in `flamediff
// serve` (issue 47): the same keyboard walk, roles and graph-tree checks as
// in the panel (calltreeShared.ts), and the layout kept in the page's link.
import { Page, expect, test } from '@playwright/test';
import { ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { pathToFileURL } from 'node:url';

import { selectors } from '../src/selectors';
import { ClickHouse, buildGo, clickhouse, repo, tempDir } from './backend';
import {
  ROW,
  checkKeyboardWalk,
  checkRoles,
  checkSplitZoom,
  checkTreeAndGraph,
  layout,
  checkSplitHover,
  splitCanvas,
  splitLabel,
  tree,
} from './calltreeShared';
import { canvas, drawnCount } from './harness';

const pprof = (side: string) => [1, 2, 3].map((k) => `testdata/pprof/${side}-run${k}.pb.gz`);

let dir: string;
let bin: string;

function run(args: string[]): Promise<string> {
  return new Promise((ok, fail) => {
    const child = spawn(bin, args, { cwd: repo, stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (b) => (out += b));
    child.on('exit', (code) => (code === 0 ? ok(out) : fail(new Error(`flamediff ${args[0]} exited with ${code}`))));
  });
}

test.beforeAll(() => {
  dir = tempDir();
  bin = buildGo('./cmd/flamediff', dir);
});

const fragment = (page: Page) => new URLSearchParams(new URL(page.url()).hash.slice(1));

/** everything runs the shared checks on a page showing a diff, then checks the link keeps the layout. */
async function everything(page: Page): Promise<void> {
  await drawnCount(page);
  await layout(page, 'Both');
  await expect(tree(page)).toBeVisible();
  await expect.poll(() => fragment(page).get('layout')).toBe('both');
  await checkRoles(page);
  await checkKeyboardWalk(page);
  await checkTreeAndGraph(page);
  // The link reopens the layout (and the zoom the tree chose).
  await page.reload();
  await expect(tree(page)).toBeVisible();
  await expect(canvas(page)).toBeVisible();
  await expect(page.getByTestId(selectors.panel.layout).getByRole('radio', { name: 'Both' })).toBeChecked();
  await layout(page, 'Tree');
  await expect.poll(() => fragment(page).get('layout')).toBe('tree');
  await expect(canvas(page)).toHaveCount(0);

  // Base beside head: one zoom in both graphs, kept in the link.
  await layout(page, 'Split');
  await expect.poll(() => fragment(page).get('layout')).toBe('split');
  await expect(splitCanvas(page, 'head')).toBeVisible();
  const half = (await splitCanvas(page, 'base').boundingBox())!.width;
  const label = await checkSplitZoom(page, half / 2);
  await expect.poll(() => fragment(page).getAll('zoom').pop()).toBe(label);
  await page.reload();
  await expect(splitCanvas(page, 'base')).toBeVisible();
  await expect.poll(() => splitLabel(page, 'head', 4, ROW + ROW / 2)).toBe(label);
  // One hover: a node hovered in base is outlined in head.
  await checkSplitHover(page);
}

test('the call tree in a report opened from disk', async ({ page }) => {
  const file = join(dir, 'report.html');
  await run(['report', '--type', 'diff', '--base', ...pprof('base'), '--head', ...pprof('head'), '-o', file]);
  await page.goto(pathToFileURL(file).href);
  await everything(page);
});

test.describe('serve', () => {
  let ch: ClickHouse;
  let server: ChildProcess | undefined;
  test.beforeAll(async () => {
    test.setTimeout(180_000);
    ch = await clickhouse(dir);
    const dsn = `clickhouse://${ch.addr}/e2e_calltree_${process.pid}`;
    await run(['migrate', '--dsn', dsn]);
    await run(['seed', '--dsn', dsn]);
    server = spawn(bin, ['serve', '--dsn', dsn, '--addr', '127.0.0.1:0'], { stdio: ['ignore', 'pipe', 'inherit'] });
  });
  test.afterAll(() => {
    server?.kill('SIGTERM');
    ch?.stop();
  });

  test('the call tree in serve', async ({ page }) => {
    const line = await new Promise<string>((ok) => createInterface({ input: server!.stdout! }).once('line', ok));
    await page.goto(line.replace('flamediff serve: ', ''));
    await everything(page);
  });
});
