// Around a culprit (issue 27) in Chromium on the seeded demo, through
// `flamediff serve` and a stored report: the callers and callees of a
// function, the filters and only new/removed, and their place in the URL.
import { Browser, Page, expect, test } from '@playwright/test';
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

import { selectors } from '../src/selectors';
import { drawnCount } from './harness';
import { Seeded, serveSeeded } from './seeded';

const p = selectors.panel;
const FN = 'checkout/pricing.ApplyDiscounts';
const DIFF = '#app=checkout-service&type=diff&head=1.7.0&base=1.6.0';

let serve: Seeded;
test.beforeAll(async () => {
  test.setTimeout(180_000);
  serve = await serveSeeded('e2e_around');
});
test.afterAll(() => serve?.stop());

const fragment = (page: Page) => new URLSearchParams(new URL(page.url()).hash.slice(1));
const sha = async (page: Page, testId: string) =>
  createHash('sha256')
    .update(await page.getByTestId(testId).screenshot())
    .digest('hex');

/** graph waits for the drawn graph, takes the mouse off it and returns its pixels' hash. */
async function graph(page: Page): Promise<string> {
  await drawnCount(page);
  await page.mouse.move(0, 0);
  return sha(page, p.canvas);
}

async function reopen(browser: Browser, url: string): Promise<Page> {
  const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
  await page.goto(url);
  return page;
}

/** setFilter types into a filter field and applies it with Enter. */
async function setFilter(page: Page, testId: string, value: string) {
  const input = page.getByTestId(testId);
  await input.fill(value);
  await input.press('Enter');
}

test("callers and callees of a table row: the function's node holds its totals of the functions frame", async ({
  page,
  browser,
}) => {
  await page.goto(`${serve.url}${DIFF}`);
  await graph(page);
  // The top table is the functions frame: its head and base totals of the function.
  const row = page.getByTestId(p.tableRow).filter({ hasText: FN }).first();
  const want = {
    head: await row.locator('td').nth(2).textContent(),
    base: await row.locator('td').nth(3).textContent(),
  };
  await row.click();
  await page.getByTestId(p.sandwichButton).click();
  const sandwich = page.getByTestId(p.sandwich);
  await expect(sandwich).toHaveAttribute('data-function', FN);
  await expect.poll(() => fragment(page).get('sandwich')).toBe(FN);
  await expect(page.getByTestId(p.callers)).toHaveAttribute('data-drawn', /[1-9]/);
  await expect(page.getByTestId(p.callees)).toHaveAttribute('data-drawn', /[1-9]/);

  const tip = page.getByTestId(p.tooltip);
  // Zoomed onto the function, the root's row scrolled away: the function spans
  // the callers' bottom row (drawn flipped) and the callees' top row.
  const callers = page.getByTestId(p.callers);
  const h = await callers.evaluate((c) => c.clientHeight);
  await callers.hover({ position: { x: 300, y: h - 10 } });
  await expect(tip.locator('div').first()).toHaveText(FN);
  await expect(tip).toContainText(want.head!);
  await expect(tip).toContainText(want.base!);
  await page.getByTestId(p.callees).hover({ position: { x: 300, y: 10 } });
  await expect(tip.locator('div').first()).toHaveText(FN);
  await expect(tip).toContainText(want.head!);
  await expect(tip).toContainText(want.base!);
  // Above the function in the callers: a caller.
  await callers.hover({ position: { x: 300, y: h - 30 } });
  await expect(tip.locator('div').first()).not.toHaveText(FN);
  await page.mouse.move(0, 0);
  // Drawn as hit: the callers' canvas is painted from its bottom row up, and the
  // few callers leave its top row empty (the callees' the other way round).
  const painted = (testId: string, y: 'top' | 'bottom') =>
    page.getByTestId(testId).evaluate((c: HTMLCanvasElement, at) => {
      const row = at === 'top' ? 2 : c.height - 2 * (window.devicePixelRatio || 1) - 2;
      const px = c.getContext('2d')!.getImageData(Math.floor(c.width / 4), row, 1, 1).data;
      return px[3] > 0;
    }, y);
  expect(await painted(p.callers, 'bottom')).toBe(true);
  expect(await painted(p.callers, 'top')).toBe(false);
  expect(await painted(p.callees, 'top')).toBe(true);
  expect(await painted(p.callees, 'bottom')).toBe(false);

  // The link reopens the sandwich.
  const pixels = await sha(page, p.callees);
  const copy = await reopen(browser, page.url());
  await expect(copy.getByTestId(p.sandwich)).toHaveAttribute('data-function', FN);
  await expect(copy.getByTestId(p.callees)).toHaveAttribute('data-drawn', /[1-9]/);
  await copy.mouse.move(0, 0);
  await expect.poll(() => sha(copy, p.callees)).toBe(pixels);
  await copy.close();

  // The breadcrumb returns to the whole graph, and back returns to the sandwich.
  await page.getByTestId(p.breadcrumb).getByRole('button', { name: 'All' }).click();
  await expect(page.getByTestId(p.sandwich)).toHaveCount(0);
  await expect.poll(() => fragment(page).get('sandwich')).toBe(null);
  await graph(page);
  await page.goBack();
  await expect(page.getByTestId(p.sandwich)).toHaveAttribute('data-function', FN);
});

test('the node menu opens callers and callees by keyboard', async ({ page }) => {
  await page.goto(`${serve.url}${DIFF}`);
  await graph(page);
  await page.getByTestId(p.canvas).focus();
  // The root, then its first child.
  await page.keyboard.press('ArrowDown');
  const label = (await page.getByTestId(p.live).textContent())!.split(',')[0];
  expect(label).not.toBe('');
  await page.keyboard.press('Shift+F10');
  await expect(page.getByTestId(p.nodeMenu)).toHaveText(label);
  await expect(page.getByRole('menuitem', { name: `Callers and callees of ${label}` })).toBeFocused();
  await page.keyboard.press('Enter');
  await expect(page.getByTestId(p.sandwich)).toHaveAttribute('data-function', label);
  // The callers' canvas: arrow up goes to a caller.
  await page.getByTestId(p.callers).focus();
  await expect(page.getByTestId(`${p.callers}-live`)).not.toBeEmpty();
});

test("a culprit's button opens its callers and callees, by keyboard too", async ({ page }) => {
  await page.goto(`${serve.url}${DIFF}`);
  await graph(page);
  // The top regression of the seeded demo: the new regexp.MustCompile.
  const top = page.getByTestId(p.culprit).first();
  const fn = (await top.getAttribute('data-function'))!;
  expect(fn).toContain('regexp');
  const button = top.getByTestId(p.culpritSandwich);
  await expect(button).toHaveAccessibleName(`Callers and callees of ${fn}`);
  await button.focus();
  await page.keyboard.press('Enter');
  await expect(page.getByTestId(p.sandwich)).toHaveAttribute('data-function', fn);
  await expect.poll(() => fragment(page).get('sandwich')).toBe(fn);
  await expect(page.getByTestId(p.callers)).toHaveAttribute('data-drawn', /[1-9]/);
});

test('filters change the graph, a bad expression shows its error and keeps the graph, and the URL keeps them', async ({
  page,
  browser,
}) => {
  await page.goto(`${serve.url}${DIFF}`);
  const whole = await graph(page);
  await expect(page.getByTestId(p.tableRow).filter({ hasText: 'checkout/tax.Compute' }).first()).toBeVisible();
  // The filter row opens from the toolbar, by keyboard; closed, it takes no room.
  await expect(page.getByTestId(p.around)).toHaveCount(0);
  const toggle = page.getByTestId(p.filters);
  await expect(toggle).toHaveAttribute('aria-expanded', 'false');
  await toggle.focus();
  await page.keyboard.press('Enter');
  await expect(toggle).toHaveAttribute('aria-expanded', 'true');
  await expect(page.getByTestId(p.around)).toBeVisible();

  await setFilter(page, p.keep, 'checkout/pricing');
  await expect.poll(() => fragment(page).get('keep')).toBe('checkout/pricing');
  await expect.poll(() => graph(page)).not.toBe(whole);
  const kept = await graph(page);
  // The table answers the filtered stacks: no function outside the kept ones' stacks.
  await expect(page.getByTestId(p.tableRow).filter({ hasText: FN }).first()).toBeVisible();
  await expect(page.getByTestId(p.tableRow).filter({ hasText: 'checkout/tax.Compute' })).toHaveCount(0);

  // A bad expression: the backend's message, the last good graph stays.
  await setFilter(page, p.drop, '(unclosed');
  const error = page.getByTestId(p.aroundError);
  await expect(error).toContainText('drop:');
  await expect(error).toContainText('missing closing )');
  expect(await graph(page)).toBe(kept);
  // Fixed, it applies.
  await setFilter(page, p.drop, 'MustCompile');
  await expect(error).toHaveCount(0);
  await expect.poll(() => graph(page)).not.toBe(kept);
  await setFilter(page, p.drop, '');

  // Only new: a head-only view, in the URL; by keyboard.
  await page.getByTestId(p.onlyNew).getByRole('switch').focus();
  await page.keyboard.press('Space');
  await expect.poll(() => fragment(page).get('only')).toBe('new');
  await expect.poll(() => graph(page)).not.toBe(kept);
  const shown = await graph(page);

  const copy = await reopen(browser, page.url());
  await expect(copy.getByTestId(p.keep)).toHaveValue('checkout/pricing');
  await expect(copy.getByTestId(p.onlyNew).getByRole('switch')).toBeChecked();
  await expect.poll(() => graph(copy)).toBe(shown);
  await copy.reload();
  await expect.poll(() => graph(copy)).toBe(shown);
  await copy.close();

  await page.goBack();
  await expect(page.getByTestId(p.onlyNew).getByRole('switch')).not.toBeChecked();
  await expect.poll(() => graph(page)).toBe(kept);
});

test('the report says that the view needs serve, and keeps the ask in its URL', async ({ page }) => {
  const file = join(serve.dir, 'around.html');
  const model = {
    queryType: 'diff',
    app: 'checkout-service',
    head: { builds: ['1.7.0'] },
    base: { builds: ['1.6.0'] },
  };
  await serve.run(['report', '--dsn', serve.dsn, '--model', JSON.stringify(model), '-o', file]);
  await page.goto(`${pathToFileURL(file).href}#sandwich=${encodeURIComponent(FN)}`);
  await expect(page.getByTestId(p.aroundNeedsServe)).toContainText('flamediff serve');
  // The whole graph stays drawn; the inputs are disabled.
  await graph(page);
  await page.getByTestId(p.filters).click();
  await expect(page.getByTestId(p.keep)).toBeDisabled();
  expect(fragment(page).get('sandwich')).toBe(FN);
});
