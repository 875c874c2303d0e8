// `flamediff report` opened from disk and `flamediff serve` in Chromium: the
// pages run the panel's code without Grafana and fetch nothing but their API.
import { Page, expect, test } from '@playwright/test';
import { ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { pathToFileURL } from 'node:url';

import { DataFrameJSON } from '@grafana/data';

import { plainText } from '../src/panel/model/culprits';
import { selectors } from '../src/selectors';
import { ClickHouse, buildGo, clickhouse, repo, tempDir } from './backend';
import { docImage } from './docImage';
import { canvas, chooseRadio, drawnCount, pickOption, toggle } from './harness';

const pprof = (side: string) => [1, 2, 3].map((k) => `testdata/pprof/${side}-run${k}.pb.gz`);
const checkout = { app: 'checkout-service', base: '1.6.0', head: '1.7.0' };

let dir: string;
let bin: string;
let run: (args: string[]) => Promise<string>;

test.beforeAll(() => {
  dir = tempDir();
  bin = buildGo('./cmd/flamediff', dir);
  run = (args) =>
    new Promise((ok, fail) => {
      const p = spawn(bin, args, { cwd: repo, stdio: ['ignore', 'pipe', 'inherit'] });
      let out = '';
      p.stdout.on('data', (b) => (out += b));
      p.on('exit', (code) => (code === 0 ? ok(out) : fail(new Error(`flamediff ${args[0]} exited with ${code}`))));
    });
});

/** openReport opens a file from disk and records every request beyond it. */
async function open(page: Page, url: string): Promise<string[]> {
  const requests: string[] = [];
  page.on('request', (r) => {
    if (r.url() !== url) {
      requests.push(r.url());
    }
  });
  await page.goto(url);
  return requests;
}

test('a report from files opens from disk and shows the diff, its toggles, the runs and the verdict', async ({
  page,
}) => {
  const file = join(dir, 'report.html');
  await run(['report', '--type', 'diff', '--base', ...pprof('base'), '--head', ...pprof('head'), '-o', file]);
  const requests = await open(page, pathToFileURL(file).href);

  const normal = await drawnCount(page);
  expect(normal).toBeGreaterThan(10);
  // The toggles switch between the embedded variants (their node counts differ).
  await toggle(page, selectors.panel.inverted);
  await expect.poll(() => drawnCount(page)).not.toBe(normal);
  await toggle(page, selectors.panel.inverted);
  await expect.poll(() => drawnCount(page)).toBe(normal);
  await toggle(page, selectors.panel.collapse);
  await expect.poll(() => drawnCount(page)).not.toBe(normal);
  await pickOption(page, selectors.panel.side, 'Base');
  await expect(canvas(page)).toBeVisible();
  await expect(page.getByTestId(selectors.panel.tableRow).first()).toBeVisible();

  await chooseRadio(page, selectors.panel.mode, 'Runs');
  await expect(page.getByTestId(selectors.runs.dot)).toHaveCount(6);
  // What the runs can see: the 3 noisy runs a side detect only large changes.
  await expect(page.getByTestId(selectors.runs.power)).toContainText('These runs detect a change of');
  expect(requests).toEqual([]);

  // From the default view again (no fragment):
  await page.goto(pathToFileURL(file).href);
  // The verdict is the CLI's, word for word: its result and first line (the
  // top culprit with its caller), then why.
  const [first, why, power] = (
    await run(['query', '--type', 'diff', '--output', 'table', '--base', ...pprof('base'), '--head', ...pprof('head')])
  ).split('\n');
  const [result, headline] = [first.slice(0, first.indexOf(': ')), first.slice(first.indexOf(': ') + 2)];
  const verdict = page.getByTestId(selectors.panel.verdict);
  await expect(verdict).toHaveAttribute('data-result', result);
  await expect(page.getByTestId(selectors.panel.verdictHeadline)).toHaveText(plainText(headline));
  await expect(verdict).toContainText(why);
  await expect(page.getByTestId(selectors.panel.verdictPower)).toHaveText(power);
  // The top culprit of the testdata: the new main.validateHead, where its caller calls it.
  const top = page.getByTestId(selectors.panel.culprit).first();
  await expect(top).toHaveAttribute('data-function', 'main.validateHead');
  await expect(top).toContainText('new');
  await expect(top).toContainText('main.iteration');
  await expect(top).toContainText('main.go:');
  // Chosen, it is in the fragment: a reload reopens it zoomed.
  const full = await drawnCount(page);
  await top.click();
  await expect
    .poll(() => new URLSearchParams(new URL(page.url()).hash.slice(1)).getAll('culprit').pop())
    .toBe('main.validateHead');
  await expect.poll(() => drawnCount(page)).not.toBe(full);
  const zoomed = await drawnCount(page);
  await page.reload();
  await expect(page.getByTestId(selectors.panel.culprit).first()).toHaveAttribute('aria-selected', 'true');
  await expect.poll(() => drawnCount(page)).toBe(zoomed);
  expect(requests).toEqual([]);
});

/** holdMainScript keeps the page's main script (the one large one) from running until window.releaseMain(). */
function holdMainScript() {
  const w = window as unknown as { Function: (...args: string[]) => () => void; releaseMain: () => void };
  const compile = w.Function;
  let released = false;
  let held: (() => void) | undefined;
  // A function, not an arrow: the page's loader calls it with new.
  w.Function = function (...args: string[]) {
    const fn = compile(...args);
    return args[args.length - 1].length > 200_000 ? () => (released ? fn() : void (held = fn)) : fn;
  };
  w.releaseMain = () => {
    released = true;
    held?.();
  };
}

/** redNodes counts the pixels of a canvas in the regression colour. */
function redPixels(c: HTMLCanvasElement): number {
  const d = c.getContext('2d')!.getImageData(0, 0, c.width, c.height).data;
  let n = 0;
  for (let i = 0; i < d.length; i += 4) {
    n += d[i] > 150 && d[i + 1] < 90 && d[i + 2] < 90 ? 1 : 0;
  }
  return n;
}

test('a report draws its diff before its main script runs, then the panel takes over', async ({ page }) => {
  const file = join(dir, 'first.html');
  await run(['report', '--type', 'diff', '--base', ...pprof('base'), '--head', ...pprof('head'), '-o', file]);
  await page.addInitScript(holdMainScript);
  await page.goto(pathToFileURL(file).href);
  const first = page.getByTestId(selectors.report.firstPaint);
  await expect(first).toHaveAttribute('data-drawn', /\d+/);
  expect(Number(await first.getAttribute('data-drawn'))).toBeGreaterThan(10);
  // main.validateHead, new in head, is a culprit: drawn red though noise is grey.
  expect(await first.evaluate(redPixels)).toBeGreaterThan(100);
  await expect(canvas(page)).toHaveCount(0);

  await page.evaluate(() => (window as unknown as { releaseMain: () => void }).releaseMain());
  expect(await drawnCount(page)).toBeGreaterThan(10);
  await expect(first).toHaveCount(0);
});

test.describe('stored runs', () => {
  let ch: ClickHouse;
  let dsn: string;
  let server: ChildProcess | undefined;

  test.beforeAll(async () => {
    test.setTimeout(120_000);
    ch = await clickhouse(dir);
    dsn = `clickhouse://${ch.addr}/e2e_report_${process.pid}`;
    await run(['migrate', '--dsn', dsn]);
    await run(['seed', '--dsn', dsn]);
  });
  test.afterAll(() => {
    server?.kill('SIGTERM');
    ch.stop();
  });

  test('a report of stored builds (the documentation screenshot)', async ({ page }) => {
    const file = join(dir, 'checkout.html');
    const model = {
      queryType: 'diff',
      app: checkout.app,
      head: { builds: [checkout.head] },
      base: { builds: [checkout.base] },
    };
    await run(['report', '--dsn', dsn, '--model', JSON.stringify(model), '-o', file]);
    await page.setViewportSize({ width: 1400, height: 700 });
    await page.emulateMedia({ colorScheme: 'dark' });
    const requests = await open(page, pathToFileURL(file).href);
    await expect(page.getByTestId(selectors.report.title)).toHaveText('checkout-service 1.7.0 vs 1.6.0');
    await expect(
      page.getByTestId(selectors.panel.tableRow).filter({ hasText: 'pricing.ApplyDiscounts' })
    ).toContainText('+');
    await drawnCount(page);
    await page.screenshot({ path: docImage('report.png') });
    expect(requests).toEqual([]);
  });

  test('serve: pick an app and builds, run the diff', async ({ page }) => {
    server = spawn(bin, ['serve', '--dsn', dsn, '--addr', '127.0.0.1:0'], { stdio: ['ignore', 'pipe', 'inherit'] });
    const line = await new Promise<string>((ok) => createInterface({ input: server!.stdout! }).once('line', ok));
    const url = line.replace('flamediff serve: ', '');
    await page.setViewportSize({ width: 1400, height: 800 });
    await page.emulateMedia({ colorScheme: 'dark' });
    const requests = await open(page, url);
    await expect(page.getByTestId(selectors.query.app)).toContainText(checkout.app);
    // The page opens on the newest builds (links.spec.ts): replace them (Backspace drops a picked build).
    await drawnCount(page);
    for (const [testId, build] of [
      [selectors.query.headBuilds, checkout.head],
      [selectors.query.baseBuilds, checkout.base],
    ]) {
      await page.getByTestId(testId).locator('input').first().click();
      await page.keyboard.press('Backspace');
      await page.getByRole('option', { name: build, exact: true }).click();
      await expect(page.getByTestId(testId)).not.toContainText('1.1');
    }
    await page.getByTestId(selectors.report.run).click();
    await drawnCount(page);
    await expect(page.getByTestId(selectors.panel.verdict)).toBeVisible();
    await page.screenshot({ path: docImage('serve.png') });
    const api = new URL(url).origin;
    expect(requests.filter((r) => !r.startsWith(`${api}/api/`) && !r.endsWith('/favicon.ico'))).toEqual([]);
  });

  test('serve and a report load without a console error or warning', async ({ page }) => {
    const logged: string[] = [];
    page.on('console', (m) => ['error', 'warning'].includes(m.type()) && logged.push(`${m.type()}: ${m.text()}`));
    page.on('pageerror', (e) => logged.push(`page error: ${e.message}`));
    const file = join(dir, 'console.html');
    await run(['report', '--type', 'diff', '--base', ...pprof('base'), '--head', ...pprof('head'), '-o', file]);
    const own = spawn(bin, ['serve', '--dsn', dsn, '--addr', '127.0.0.1:0'], { stdio: ['ignore', 'pipe', 'inherit'] });
    try {
      const line = await new Promise<string>((ok) => createInterface({ input: own.stdout! }).once('line', ok));
      const url = line.replace('flamediff serve: ', '');
      for (const address of [
        `${url}#app=${checkout.app}&type=diff&head=${checkout.head}&base=${checkout.base}`,
        pathToFileURL(file).href,
      ]) {
        await page.goto(address);
        await drawnCount(page);
        // The table comes after the graph's first paint (serve's from a query of its own): wait for it too.
        await expect(page.getByTestId(selectors.panel.tableRow).first()).toBeVisible();
      }
    } finally {
      own.kill('SIGTERM');
    }
    expect(logged).toEqual([]);
  });

  test("serve's page asks for its diff once: the first paint's answer is the panel's", async ({ page }) => {
    const own = spawn(bin, ['serve', '--dsn', dsn, '--addr', '127.0.0.1:0'], { stdio: ['ignore', 'pipe', 'inherit'] });
    try {
      const line = await new Promise<string>((ok) => createInterface({ input: own.stdout! }).once('line', ok));
      const url = line.replace('flamediff serve: ', '');
      const asked: string[] = [];
      page.on('request', (r) => r.url().endsWith('/api/query') && asked.push(JSON.parse(r.postData()!).queryType));
      await page.goto(`${url}#app=${checkout.app}&type=diff&head=${checkout.head}&base=${checkout.base}`);
      await drawnCount(page);
      await expect(page.getByTestId(selectors.panel.tableRow).first()).toBeVisible();
      await expect(page.getByTestId(selectors.report.firstPaint)).toHaveCount(0);
      // The top table's functions query is the panel's own.
      expect(asked.filter((t) => t === 'diff')).toEqual(['diff']);
    } finally {
      own.kill('SIGTERM');
    }
  });

  test('serve: choose changepoints, pick its builds, run it', async ({ page }) => {
    const own = spawn(bin, ['serve', '--dsn', dsn, '--addr', '127.0.0.1:0'], { stdio: ['ignore', 'pipe', 'inherit'] });
    try {
      const line = await new Promise<string>((ok) => createInterface({ input: own.stdout! }).once('line', ok));
      await open(page, line.replace('flamediff serve: ', ''));
      await expect(page.getByTestId(selectors.query.app)).toContainText(checkout.app);
      await chooseRadio(page, selectors.query.queryType, 'changepoints');
      await expect(page.getByTestId(selectors.query.headBuilds)).toHaveCount(0);
      await pickOption(page, selectors.query.builds, checkout.base);
      await pickOption(page, selectors.query.builds, checkout.head);
      // The editor runs each change as it is made (serve opens on a diff and
      // follows its form): wait for the answer to the query with both builds.
      const answered = page.waitForResponse(
        (r) => r.url().endsWith('/api/query') && JSON.parse(r.request().postData()!).builds?.length === 2
      );
      await page.getByTestId(selectors.report.run).click();
      const res = await answered;
      expect(JSON.parse(res.request().postData()!)).toMatchObject({
        queryType: 'changepoints',
        app: checkout.app,
        builds: [checkout.base, checkout.head],
      });
      expect(res.status()).toBe(200);
      const frames = (await res.json()) as DataFrameJSON[];
      expect(frames.map((f) => f.schema?.name)).toEqual(['changepoints']);
      expect(frames[0].schema?.meta?.custom?.builds).toEqual([checkout.base, checkout.head]);
      await expect(page.getByTestId(selectors.report.error)).toHaveCount(0);
    } finally {
      own.kill('SIGTERM');
    }
  });
});
