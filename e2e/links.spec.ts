// Issue 27 in Chromium on the seeded demo, through `flamediff serve` and a
// stored `flamediff report` opened from disk: the view lives in the URL (a
// copied link, a reload and back/forward reopen it), serve opens on a drawn
// diff with its presets, the colour-blind palette's ends and grey, and the
// top table fits at 1280 px.
import { Browser, Page, expect, test } from '@playwright/test';
import { ChildProcess, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { pathToFileURL } from 'node:url';

import { DataFrameJSON } from '@grafana/data';

import { selectors } from '../src/selectors';
import { ClickHouse, buildGo, clickhouse, repo, tempDir } from './backend';
import { nodeBox, variant } from './frames';
import { canvas, chooseRadio, drawnCount, pickOption, pixel, toggle } from './harness';

const p = selectors.panel;
const r = selectors.report;

let dir: string;
let bin: string;
let ch: ClickHouse;
let dsn: string;
let server: ChildProcess;
let serveUrl: string;

function run(args: string[]): Promise<string> {
  return new Promise((ok, fail) => {
    const child = spawn(bin, args, { cwd: repo, stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (b) => (out += b));
    child.on('exit', (code) => (code === 0 ? ok(out) : fail(new Error(`flamediff ${args[0]} exited with ${code}`))));
  });
}

test.beforeAll(async () => {
  test.setTimeout(180_000);
  dir = tempDir();
  bin = buildGo('./cmd/flamediff', dir);
  ch = await clickhouse(dir);
  dsn = `clickhouse://${ch.addr}/e2e_links_${process.pid}`;
  await run(['migrate', '--dsn', dsn]);
  await run(['seed', '--dsn', dsn]);
  server = spawn(bin, ['serve', '--dsn', dsn, '--addr', '127.0.0.1:0'], { stdio: ['ignore', 'pipe', 'inherit'] });
  const line = await new Promise<string>((ok) => createInterface({ input: server.stdout! }).once('line', ok));
  serveUrl = line.replace('flamediff serve: ', '');
});
test.afterAll(() => {
  server?.kill('SIGTERM');
  ch?.stop();
});

const fragment = (page: Page) => new URLSearchParams(new URL(page.url()).hash.slice(1));

/** settled waits for the drawn graph and takes the mouse off it (no tooltip, no hover). */
async function settled(page: Page): Promise<number> {
  const n = await drawnCount(page);
  await page.mouse.move(0, 0);
  return n;
}

/** viewOf is what must be the same in two pages showing one view: selected state and pixels. */
async function viewOf(page: Page) {
  await settled(page);
  // The table comes after the graph (its own query).
  await expect(page.getByTestId(p.tableRow).first()).toBeVisible();
  const root = page.getByTestId(p.root);
  const selected = page.locator(`[data-testid="${p.tableRow}"][aria-selected="true"]`);
  return {
    variant: await root.getAttribute('data-variant'),
    side: await root.getAttribute('data-side'),
    normalize: await root.getAttribute('data-normalize'),
    row: (await selected.count()) > 0 ? await selected.locator('td').first().getAttribute('title') : null,
    search: await page.getByTestId(p.search).inputValue(),
    palette: await page.getByTestId(r.palette).getByRole('switch').isChecked(),
    pixels: createHash('sha256')
      .update(await canvas(page).screenshot())
      .digest('hex'),
  };
}

/** reopen opens url in a new page of the same size, as a pasted link would. */
async function reopen(browser: Browser, url: string, size = { width: 1280, height: 800 }): Promise<Page> {
  const page = await browser.newPage({ viewport: size });
  await page.goto(url);
  return page;
}

test('serve opens on a drawn diff of the newest build against the one before, and its presets switch', async ({
  page,
}) => {
  await page.goto(serveUrl);
  expect(await settled(page)).toBeGreaterThan(10);
  // The demo's newest builds; the first app the resources list.
  await expect.poll(() => fragment(page).get('head')).toBe('1.11.0');
  expect(fragment(page).get('base')).toBe('1.10.0');
  expect(fragment(page).get('type')).toBe('diff');
  expect(fragment(page).get('app')).toBe('checkout-service');
  await expect(page.getByTestId(p.legend)).toBeVisible();
  await expect(page.getByTestId(selectors.query.headBuilds)).toContainText('1.11.0');
  await expect(page.getByTestId(p.verdict)).toBeVisible();

  // The preset menu, by keyboard: head runs only is a flame graph, no legend.
  const menu = page.getByTestId(r.preset).locator('input');
  await menu.focus();
  await page.keyboard.type('Head runs only');
  await page.keyboard.press('Enter');
  await expect.poll(() => fragment(page).get('type')).toBe('flamegraph');
  await settled(page);
  await expect(page.getByTestId(p.legend)).toHaveCount(0);
  expect(fragment(page).get('head')).toBe('1.11.0');

  await pickOption(page, r.preset, 'Against build…');
  await pickOption(page, r.presetBase, '1.6.0');
  await expect.poll(() => fragment(page).get('base')).toBe('1.6.0');
  expect(fragment(page).get('type')).toBe('diff');
  await settled(page);
  await expect(page.getByTestId(p.legend)).toBeVisible();

  await pickOption(page, r.preset, 'Against the previous build');
  await expect.poll(() => fragment(page).get('base')).toBe('1.10.0');
  await settled(page);
  // Back goes to the comparison before.
  await page.goBack();
  await expect.poll(() => fragment(page).get('base')).toBe('1.6.0');
  await expect(page.getByTestId(selectors.query.baseBuilds)).toContainText('1.6.0');
});

test('a URL copied from serve reopens the same view; reload and back/forward too', async ({ page, browser }) => {
  await page.goto(`${serveUrl}#app=checkout-service&type=diff&head=1.7.0&base=1.6.0`);
  const plain = await viewOf(page);
  expect(plain.variant).toBe('normal');

  await toggle(page, p.collapse);
  await chooseRadio(page, p.normalize, 'Relative');
  await expect(page.getByTestId(p.root)).toHaveAttribute('data-normalize', 'relative');
  await pickOption(page, p.side, 'Base');
  await page.getByTestId(p.tableRow).filter({ hasText: 'checkout/pricing.ApplyDiscounts' }).first().click();
  await toggle(page, r.palette);
  await expect.poll(() => fragment(page).get('palette')).toBe('colorBlind');
  const f = fragment(page);
  expect(f.get('collapsed')).toBe('1');
  expect(f.get('norm')).toBe('relative');
  expect(f.get('side')).toBe('base');
  expect(f.get('row')).toBe('checkout/pricing.ApplyDiscounts');
  // The zoom is the path to the function's widest node.
  expect(f.getAll('zoom').pop()).toBe('checkout/pricing.ApplyDiscounts');
  const shown = await viewOf(page);
  expect(shown).toMatchObject({
    variant: 'collapsed',
    side: 'base',
    normalize: 'relative',
    row: 'checkout/pricing.ApplyDiscounts',
    palette: true,
  });
  expect(shown.pixels).not.toBe(plain.pixels);

  const copy = await reopen(browser, page.url());
  expect(await viewOf(copy)).toEqual(shown);
  await copy.reload();
  expect(await viewOf(copy)).toEqual(shown);
  await copy.close();

  // Back: the palette goes back to red-green, the rest stays; forward again.
  await page.goBack();
  await expect.poll(() => fragment(page).get('palette')).toBe(null);
  await expect(page.getByTestId(r.palette).getByRole('switch')).not.toBeChecked();
  expect((await viewOf(page)).row).toBe('checkout/pricing.ApplyDiscounts');
  await page.goForward();
  await expect.poll(() => fragment(page).get('palette')).toBe('colorBlind');
  expect(await viewOf(page)).toEqual(shown);
});

test('a drill-down and a zoom reopen from the link', async ({ page, browser }) => {
  await page.goto(`${serveUrl}#app=checkout-service&type=diff&head=1.7.0&base=1.6.0`);
  await settled(page);
  await page.getByTestId(p.tableRow).filter({ hasText: 'checkout/cart.(*Cart).Total' }).first().click();
  await page.getByTestId(p.fullDetail).click();
  await expect(page.getByTestId(p.breadcrumb)).toBeVisible();
  await expect.poll(() => fragment(page).getAll('drill').pop()).toBe('checkout/cart.(*Cart).Total');
  const shown = await viewOf(page);
  const copy = await reopen(browser, page.url());
  await expect(copy.getByTestId(p.breadcrumb)).toContainText('checkout/cart.(*Cart).Total');
  await expect.poll(async () => (await viewOf(copy)).pixels).toBe(shown.pixels);
  await copy.close();
});

test('a chosen culprit (its zoom and highlighted path) reopens from the link', async ({ page, browser }) => {
  await page.goto(`${serveUrl}#app=checkout-service&type=diff&head=1.7.0&base=1.6.0`);
  await settled(page);
  const row = page.getByTestId(p.culprit).first();
  const name = await row.getAttribute('data-function');
  await row.click();
  await expect(row).toHaveAttribute('aria-selected', 'true');
  await expect.poll(() => fragment(page).getAll('culprit').pop()).toBe(name);
  expect(fragment(page).getAll('zoom')).toEqual(fragment(page).getAll('culprit'));
  const shown = await viewOf(page);
  const copy = await reopen(browser, page.url());
  await expect(copy.getByTestId(p.culprit).first()).toHaveAttribute('aria-selected', 'true');
  await expect.poll(async () => (await viewOf(copy)).pixels).toBe(shown.pixels);
  // Escape shows the whole graph with the path still highlighted: the same in both pages.
  for (const pg of [page, copy]) {
    await canvas(pg).focus();
    await pg.keyboard.press('Escape');
    await canvas(pg).blur();
  }
  await expect.poll(async () => (await viewOf(copy)).pixels).toBe((await viewOf(page)).pixels);
  expect((await viewOf(page)).pixels).not.toBe(shown.pixels);
  await copy.close();
});

test('the report from disk keeps its view in the fragment', async ({ page, browser }) => {
  const file = join(dir, 'checkout.html');
  const model = {
    queryType: 'diff',
    app: 'checkout-service',
    head: { builds: ['1.7.0'] },
    base: { builds: ['1.6.0'] },
  };
  await run(['report', '--dsn', dsn, '--model', JSON.stringify(model), '-o', file]);
  const url = pathToFileURL(file).href;
  await page.goto(url);
  const plain = await viewOf(page);
  await toggle(page, p.inverted);
  await page.getByTestId(p.tableRow).filter({ hasText: 'regexp/syntax.Parse' }).first().click();
  await expect.poll(() => fragment(page).get('row')).toBe('regexp/syntax.Parse');
  expect(fragment(page).get('inverted')).toBe('1');
  const shown = await viewOf(page);
  expect(shown.variant).toBe('inverted');
  expect(shown.pixels).not.toBe(plain.pixels);

  const copy = await reopen(browser, page.url());
  expect(await viewOf(copy)).toEqual(shown);
  await copy.close();
  // The runs view too, and back to the graph.
  await chooseRadio(page, p.mode, 'Runs');
  await expect.poll(() => fragment(page).get('mode')).toBe('runs');
  await page.goBack();
  await expect(page.getByTestId(p.root)).toBeVisible();
  expect(await viewOf(page)).toEqual(shown);
});

const ends = { faster: [26, 133, 255], grey: [148, 142, 142], slower: [230, 159, 0] };

test('the colour-blind palette paints a regression orange, an improvement blue and noise grey', async ({ page }) => {
  // ios-app's codec swap at 1.5.0: HEIC decoding is new (head only), PNG inflating gone (base only).
  const model = {
    queryType: 'diff',
    app: 'ios-app',
    head: { builds: ['1.5.0'], runs: [] },
    base: { builds: ['1.4.0'], runs: [] },
    variants: true,
  };
  const res = await page.request.post(`${serveUrl}api/query`, { data: model });
  expect(res.ok()).toBe(true);
  const normal = variant((await res.json()) as DataFrameJSON[], 'normal');
  await page.goto(`${serveUrl}#app=ios-app&type=diff&head=1.5.0&base=1.4.0`);
  await settled(page);
  // The switch by keyboard.
  await page.getByTestId(r.palette).getByRole('switch').focus();
  await page.keyboard.press('Space');
  await expect.poll(() => fragment(page).get('palette')).toBe('colorBlind');
  const width = await canvas(page).evaluate((c) => c.clientWidth);
  // Above the label's text, which is drawn over the middle of the row.
  const mid = (b: { x: number; y: number; width: number }): [number, number] => [b.x + b.width / 2, b.y + 3];

  const heic = mid(nodeBox(normal, 'ImageKit.HEICCodec.decode(_:)', 'head', width));
  await expect.poll(() => pixel(page, ...heic)).toEqual(ends.slower);
  // A node the statistics call noise, wide enough to hit.
  const fields = normal.schema!.fields;
  const col = (n: string) => normal.data!.values[fields.findIndex((x) => x.name === n)] as unknown[];
  const texts: string[] = fields.find((x) => x.name === 'label')!.config!.type!.enum!.text!;
  const noise = col('label')
    .map((l, i) => ({ label: texts[l as number], i }))
    .find(
      ({ label, i }) =>
        col('significant')[i] === false &&
        (col('valueRight')[i] as number) > 0.1 * (col('valueRight')[0] as number) &&
        (col('value')[i] as number) > 0
    )!;
  expect(noise).toBeDefined();
  await expect.poll(() => pixel(page, ...mid(nodeBox(normal, noise.label, 'head', width)))).toEqual(ends.grey);
  // The legend's ends and the tooltip's run strip follow the palette.
  const legend = await page
    .getByTestId(p.legend)
    .locator('span')
    .first()
    .evaluate((e) => getComputedStyle(e).backgroundColor);
  expect(legend).toBe(`rgb(${ends.faster.join(', ')})`);
  await canvas(page).hover({ position: { x: heic[0], y: heic[1] } });
  await expect(page.getByTestId(p.runStrip).locator('circle').first()).toHaveAttribute(
    'fill',
    `rgb(${ends.slower.join(', ')})`
  );
  await page.mouse.move(0, 0);

  await pickOption(page, p.side, 'Base');
  const png = mid(nodeBox(normal, 'ImageKit.PNGCodec.inflate(_:)', 'base', width));
  await expect.poll(() => pixel(page, ...png)).toEqual(ends.faster);
});

test('no column of the top table is clipped at 1280 px and wider; long names ellipsise with their full name', async ({
  browser,
}) => {
  for (const width of [1280, 1600]) {
    const page = await reopen(browser, `${serveUrl}#app=checkout-service&type=diff&head=1.7.0&base=1.6.0`, {
      width,
      height: 800,
    });
    await settled(page);
    const table = page.getByTestId(p.table);
    await expect(table.locator('th')).toHaveCount(7);
    const fit = await table.evaluate((t) => {
      const wrap = t.parentElement!;
      const box = wrap.getBoundingClientRect();
      const cells = [...t.querySelectorAll('th, tr:first-child td')].map((c) => {
        const b = c.getBoundingClientRect();
        return { text: c.textContent, inside: b.left >= box.left - 0.5 && b.right <= box.right + 0.5 };
      });
      // Figures are never cut; the function column may ellipsise.
      const figures = [...t.querySelectorAll('td:not(:first-child), th')].every((c) => c.scrollWidth <= c.clientWidth);
      return { scrolls: wrap.scrollWidth > wrap.clientWidth, cells, figures };
    });
    expect(fit.scrolls, `${width} px`).toBe(false);
    expect(
      fit.cells.filter((c) => !c.inside),
      `${width} px`
    ).toEqual([]);
    expect(fit.figures, `${width} px`).toBe(true);
    // The longest name is cut with an ellipsis; its cell carries the full name (title, text).
    const long = page.getByTestId(p.tableRow).filter({ hasText: 'net/http.serverHandler.ServeHTTP' }).first();
    const name = long.locator('td').first();
    await expect(name).toHaveAttribute('title', 'net/http.serverHandler.ServeHTTP');
    await expect(name).toHaveText('net/http.serverHandler.ServeHTTP');
    expect(await name.evaluate((c) => getComputedStyle(c).textOverflow)).toBe('ellipsis');
    await page.close();
  }
});

test("an evolution report keeps the matrix's Significant changes only switch in the fragment", async ({
  page,
  browser,
}) => {
  const file = join(dir, 'evolution.html');
  await run([
    'report',
    '--dsn',
    dsn,
    '--model',
    JSON.stringify({ queryType: 'evolution', app: 'checkout-service' }),
    '-o',
    file,
  ]);
  await page.goto(pathToFileURL(file).href);
  const toggle = (pg: Page) => pg.getByTestId(selectors.evolution.significantOnly).getByRole('switch');
  await expect(toggle(page)).toBeChecked();
  await toggle(page).focus();
  await page.keyboard.press('Space');
  await expect.poll(() => fragment(page).get('sig')).toBe('0');
  const copy = await reopen(browser, page.url());
  await expect(toggle(copy)).not.toBeChecked();
  await copy.close();
  await page.goBack();
  await expect(toggle(page)).toBeChecked();
});
