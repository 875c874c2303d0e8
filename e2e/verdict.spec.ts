// The panel on real statistics (issue 12): noise in grey, normalisation,
// the honest tooltip, the functions table, drilling with focus, the package
// rule and the keyboard. Frames and the panel's own queries come from the
// backend at test time (global-setup.ts); every check runs whatever the
// backend answers, so a missing statistic or an ignored option fails.
import { Page, expect, test } from '@playwright/test';
import { DataFrameJSON } from '@grafana/data';

import { selectors } from '../src/selectors';
import { checkoutModel, col, frames, labelsOf, variant } from './frames';
import { SMALL_TREE } from './global-setup';
import { canvas, drawnCount, hoverLabel, isRed, mount, openHarness, pixel, toggle } from './harness';

const WIDTH = 1400;
const HEIGHT = 560;
const ROW = 20;
const p = selectors.panel;

/** Boxes of every node of one side in the full view, in CSS pixels of a canvas graphWidth wide. */
function boxes(frame: DataFrameJSON, side: 'head' | 'base', graphWidth: number) {
  const level = col(frame, 'level')!;
  const value = col(frame, side === 'head' ? 'valueRight' : 'value')!;
  const next: number[] = [0];
  const scale = graphWidth / value[0];
  return level.map((l, i) => {
    const x = next[l];
    next[l] = x + value[i];
    next[l + 1] = x;
    return { x: x * scale, y: l * ROW, width: value[i] * scale, level: l };
  });
}

/** pathOf is the focus path of node i: the labels from the root's child down to it. */
function pathOf(frame: DataFrameJSON, i: number): string[] {
  const labels = labelsOf(frame);
  const level = col(frame, 'level')!;
  const path = [labels[i]];
  for (let j = i - 1, l = level[i]; j >= 0 && l > 1; j--) {
    if (level[j] < l) {
      l = level[j];
      path.unshift(labels[j]);
    }
  }
  return path;
}

/** The graph's width: the canvas beside the table. */
const graphWidth = async (page: Page) => (await canvas(page).boundingBox())!.width;

/** queries is what the panel asked the backend, oldest first. */
const queries = (page: Page) => page.evaluate(() => window.harness.queries as Array<Record<string, unknown>>);

const isGrey = ([r, g, b]: number[]) => Math.abs(r - g) < 12 && Math.abs(g - b) < 12 && r > 100 && r < 190;

async function mountCheckout(page: Page, set: DataFrameJSON[], query = checkoutModel(), options = {}) {
  await openHarness(page);
  await mount(page, 'mountPanel', { frames: set, query, width: WIDTH, height: HEIGHT, options });
  await expect(canvas(page)).toHaveAttribute('data-drawn', /\d+/);
}

test.describe('noise in grey', () => {
  test('a large insignificant delta is grey, a significant one red; the toggle colours noise again', async ({
    page,
  }) => {
    const normal = variant(frames().checkoutDiff, 'normal');
    await mountCheckout(page, frames().checkoutDiff);
    const b = boxes(normal, 'head', await graphWidth(page));
    const sig = col<boolean | null>(normal, 'significant')!;
    expect(sig, 'the stored diff has per-node statistics').toBeDefined();
    const delta = col(normal, 'delta')!;
    const wide = (i: number) => b[i].width >= 12;
    const pick = (ok: (i: number) => boolean) =>
      delta
        .map((_, i) => i)
        .filter((i) => ok(i) && wide(i))
        .sort((x, y) => Math.abs(delta[y]) - Math.abs(delta[x]))[0];
    const noise = pick((i) => sig[i] === false && delta[i] !== 0);
    const real = pick((i) => sig[i] === true && delta[i] > 0);
    expect(noise, 'an insignificant node with a delta, wide enough to test').toBeDefined();
    expect(real, 'a significant slower node, wide enough to test').toBeDefined();
    const at = (i: number) => [b[i].x + b[i].width / 2, b[i].y + 3] as const;
    await expect.poll(async () => isGrey(await pixel(page, ...at(noise)))).toBe(true);
    await expect.poll(async () => isRed(await pixel(page, ...at(real)))).toBe(true);
    const legend = page.getByTestId(p.legend);
    await expect(legend).toContainText('not significant (q ≥ 0.05)');
    await expect(legend).toContainText('Δ of the base total');

    const before = await pixel(page, ...at(noise));
    await toggle(page, p.significantOnly);
    await expect.poll(() => pixel(page, ...at(noise))).not.toEqual(before);
    await expect(legend).not.toContainText('not significant');
  });

  test('without statistics the legend says why nothing is greyed', async ({ page }) => {
    await openHarness(page);
    await mount(page, 'mountPanel', { frames: frames().panelDiff, width: 1000, height: 400 });
    const notice = variant(frames().panelDiff, 'normal').schema!.meta!.notices![0].text;
    await expect(page.getByTestId(p.notice)).toContainText(notice);
    await expect(page.getByTestId(p.significantOnly)).toHaveCount(0);
  });
});

test.describe('normalisation', () => {
  test('the toolbar toggle asks the backend for the other normalisation', async ({ page }) => {
    await mountCheckout(page, frames().checkoutDiff);
    await page.getByTestId(p.normalize).getByRole('radio', { name: 'Relative' }).click();
    await expect
      .poll(async () => (await queries(page)).some((q) => q.normalize === 'relative' && q.variants))
      .toBe(true);
    await expect(page.getByTestId(p.root)).toHaveAttribute('data-normalize', 'relative');
  });

  test('with both normalisations at hand it switches without a query', async ({ page }) => {
    await mountCheckout(page, [...frames().checkoutDiff, ...frames().checkoutRelative]);
    await page.getByTestId(p.normalize).getByRole('radio', { name: 'Relative' }).click();
    await expect(page.getByTestId(p.root)).toHaveAttribute('data-normalize', 'relative');
    await expect(page.getByTestId(p.legend)).toContainText('Δ of each side’s share');
    await page.waitForTimeout(300);
    expect((await queries(page)).filter((q) => q.queryType !== 'functions')).toEqual([]);
  });
});

test.describe('honest tooltip', () => {
  test('a shared node shows per-run values, the changes and the statistics; a new one says so in words', async ({
    page,
  }) => {
    const normal = variant(frames().checkoutDiff, 'normal');
    await mountCheckout(page, frames().checkoutDiff);
    const b = boxes(normal, 'head', await graphWidth(page));
    const [base, head] = [col(normal, 'value')!, col(normal, 'valueRight')!];
    const labels = labelsOf(normal);
    const tip = page.getByTestId(p.tooltip);

    const shared = b.findIndex((x, i) => i > 0 && x.width > 30 && base[i] > 0 && head[i] !== base[i]);
    expect(await hoverLabel(page, b[shared].x + 5, b[shared].y + 3)).toBe(labels[shared]);
    await expect(tip).toContainText('Head total (per run)');
    await expect(tip).toContainText('Base self (per run)');
    await expect(tip).toContainText('Change, share of base total');
    const rel = ((head[shared] - base[shared]) / base[shared]) * 100;
    await expect(tip).toContainText(`Change of the node${rel > 0 ? '+' : ''}${rel.toFixed(2)}%`);
    await expect(tip).toContainText('Runshead 10, base 10');
    await expect(tip).toContainText('95% CI of the change');
    await expect(tip).toContainText('p / q');
    const runs = JSON.parse(col<string>(normal, 'headRuns')![shared]).length;
    await expect(tip.getByTestId(p.runStrip).locator('circle')).toHaveCount(
      runs + JSON.parse(col<string>(normal, 'baseRuns')![shared]).length
    );

    const fresh = b.findIndex((x, i) => x.width > 8 && base[i] === 0 && head[i] > 0);
    expect(fresh, 'a node only in head').toBeGreaterThan(0);
    await hoverLabel(page, b[fresh].x + b[fresh].width / 2, b[fresh].y + 3);
    await expect(tip).toContainText('only in head');
    await expect(tip).not.toContainText(/inf/i);
  });
});

test.describe('top functions from the functions answer', () => {
  const fns = () => frames().checkoutFunctions[0];

  test('the table is the functions frame, row for row, without total or other', async ({ page }) => {
    await mountCheckout(page, frames().checkoutDiff);
    const rows = page.getByTestId(p.tableRow);
    const names = col<string>(fns(), 'function')!;
    await expect(rows).toHaveCount(Math.min(300, names.length));
    expect(await rows.locator('td:first-child').allTextContents()).toEqual(names.slice(0, 300));
    expect(names).not.toContain('total');
    expect(names).not.toContain('other');
    expect((await queries(page)).map((q) => q.queryType)).toEqual(['functions']);
  });

  test('sorts by self, total, total and self delta and significance', async ({ page }) => {
    await mountCheckout(page, frames().checkoutDiff);
    const names = col<string>(fns(), 'function')!;
    const first = page.getByTestId(p.tableRow).first().locator('td').first();
    const top = (v: number[]) => names[v.indexOf(Math.max(...v))];
    await page.getByRole('button', { name: 'Sort by Self', exact: true }).click();
    await expect(first).toHaveText(top(col(fns(), 'selfHead')!));
    await page.getByRole('button', { name: 'Sort by Head total' }).click();
    await expect(first).toHaveText(top(col(fns(), 'totalHead')!));
    await page.getByRole('button', { name: 'Sort by Total Δ' }).click();
    await expect(first).toHaveText(top(col(fns(), 'delta')!.map(Math.abs)));
    // Self delta: the self value's change (absolute: of the base total, the same order).
    const selfBase = col(fns(), 'selfBase')!;
    await page.getByRole('button', { name: 'Sort by Self Δ' }).click();
    await expect(first).toHaveText(top(col(fns(), 'selfHead')!.map((v, i) => Math.abs(v - selfBase[i]))));
    const q = col<number | null>(fns(), 'qValue')!.map((v) => -(v ?? Infinity));
    await page.getByRole('button', { name: 'Sort by q' }).click();
    await expect(first).toHaveText(top(q));
  });

  test('a click (or Enter) on a row focuses the function in the graph', async ({ page }) => {
    await mountCheckout(page, frames().checkoutDiff);
    const name = 'checkout/pricing.ApplyDiscounts';
    await page.getByTestId(p.tableRow).filter({ hasText: name }).first().click();
    await expect(page.getByTestId(p.search)).toHaveValue(name);
    const normal = variant(frames().checkoutDiff, 'normal');
    const labels = labelsOf(normal);
    const head = col(normal, 'valueRight')!;
    const widest = labels.reduce((best, l, i) => (l === name && (best < 0 || head[i] > head[best]) ? i : best), -1);
    const y = col(normal, 'level')![widest] * ROW + ROW / 2;
    expect(await hoverLabel(page, 3, y)).toBe(name);
    expect(await hoverLabel(page, (await graphWidth(page)) - 3, y)).toBe(name);
  });
});

test.describe('drill into anything', () => {
  test('clicking an other node queries its parent with focus; the breadcrumb returns', async ({ page }) => {
    const small = variant(frames().checkoutSmall, 'normal');
    await mountCheckout(page, frames().checkoutSmall, checkoutModel({ maxNodes: SMALL_TREE }), { showTable: false });
    const b = boxes(small, 'head', await graphWidth(page));
    const labels = labelsOf(small);
    const other = b.findIndex((x, i) => labels[i] === 'other' && x.width > 4);
    expect(other, 'an other node wide enough to click').toBeGreaterThan(0);
    // An other node is not a frame: the focus is its parent's path.
    const path = pathOf(small, other).slice(0, -1);
    const before = await drawnCount(page);
    const at = { x: b[other].x + b[other].width / 2, y: b[other].y + 3 };
    expect(await hoverLabel(page, at.x, at.y)).toBe('other');
    await expect(page.getByTestId(p.tooltip)).toContainText('Click or press Enter to load them in full detail');
    const answer = page.waitForResponse(
      (r) => r.url().endsWith('/query') && JSON.parse(r.request().postData() ?? '{}').focus !== undefined
    );
    await canvas(page).click({ position: at });
    // The backend answers the focus: the path, one node a level, then the subtree under it.
    const focused = ((await (await answer).json()) as DataFrameJSON[])[0];
    const focusedLevel = col(focused, 'level')!;
    const focusedLabels = labelsOf(focused);
    for (let l = 1; l <= path.length; l++) {
      expect(
        focusedLabels.filter((_, i) => focusedLevel[i] === l),
        `level ${l} of the focused answer`
      ).toEqual([path[l - 1]]);
    }
    const crumb = page.getByTestId(p.breadcrumb);
    await expect(crumb).toBeVisible();
    await expect(crumb).toContainText(path[path.length - 1]);
    expect((await queries(page)).at(-1)).toMatchObject({ focus: path, variants: false });
    // The focused node fills the width at its level.
    await expect.poll(() => hoverLabel(page, 3, path.length * ROW + ROW / 2)).toBe(path[path.length - 1]);
    await crumb.getByRole('button', { name: 'All' }).click();
    await expect(crumb).toHaveCount(0);
    await expect.poll(() => drawnCount(page)).toBe(before);
  });

  test('"load full detail" on a zoomed node queries it with focus', async ({ page }) => {
    const normal = variant(frames().checkoutDiff, 'normal');
    await mountCheckout(page, frames().checkoutDiff, checkoutModel(), { showTable: false });
    const b = boxes(normal, 'head', await graphWidth(page));
    const node = b.findIndex((x) => x.level === 3 && x.width > 40);
    const path = pathOf(normal, node);
    await expect(page.getByTestId(p.fullDetail)).toHaveCount(0);
    await canvas(page).click({ position: { x: b[node].x + 5, y: b[node].y + 3 } });
    await page.getByTestId(p.fullDetail).click();
    await expect(page.getByTestId(p.breadcrumb)).toContainText(path[path.length - 1]);
    expect((await queries(page)).at(-1)).toMatchObject({ focus: path, variants: false });
  });
});

test('colour by package follows the backend package field (the evolution matrix rule)', async ({ page }) => {
  const single = frames().panelSingle[0];
  await openHarness(page);
  await mount(page, 'mountPanel', {
    frames: frames().panelSingle,
    width: 1000,
    height: 400,
    options: { showTable: false },
  });
  await expect(canvas(page)).toHaveAttribute('data-drawn', /\d+/);
  const pkgTexts: string[] = single.schema!.fields.find((f) => f.name === 'package')!.config!.type!.enum!.text!;
  const pkg = col(single, 'package')!.map((k) => pkgTexts[k]);
  const labels = labelsOf(single);
  const b = boxes(single, 'base', 1000);
  const wide = b.map((_, i) => i).filter((i) => b[i].width > 10);
  const [x, y] = wide.flatMap((i) =>
    wide.filter((j) => j > i && pkg[j] === pkg[i] && labels[j] !== labels[i]).map((j) => [i, j])
  )[0];
  const at = (i: number) => pixel(page, b[i].x + b[i].width / 2, b[i].y + 3);
  expect(pkg[x]).toBe(pkg[y]);
  expect(await at(x)).toEqual(await at(y));
});

test.describe('keyboard', () => {
  test('arrows move through the graph, Enter zooms, Escape resets', async ({ page }) => {
    const normal = variant(frames().checkoutDiff, 'normal');
    await mountCheckout(page, frames().checkoutDiff, checkoutModel(), { showTable: false });
    const labels = labelsOf(normal);
    const level = col(normal, 'level')!;
    const head = col(normal, 'valueRight')!;
    await expect(canvas(page)).toHaveAttribute('aria-label', /Arrow keys/);
    await canvas(page).focus();
    const tipLabel = page.getByTestId(p.tooltip).locator('div').first();
    await expect(tipLabel).toHaveText('total');
    // Down: the widest callee of the root; down again: its widest callee.
    const widestChild = (i: number) => {
      let best = -1;
      for (let j = i + 1; j < level.length && level[j] > level[i]; j++) {
        if (level[j] === level[i] + 1 && head[j] > 0 && (best < 0 || head[j] > head[best])) {
          best = j;
        }
      }
      return best;
    };
    const c1 = widestChild(0);
    const c2 = widestChild(c1);
    await page.keyboard.press('ArrowDown');
    await expect(tipLabel).toHaveText(labels[c1]);
    await page.keyboard.press('ArrowDown');
    await expect(tipLabel).toHaveText(labels[c2]);
    await expect(page.getByTestId(p.live)).toContainText(labels[c2]);
    await page.keyboard.press('Enter');
    const y = level[c2] * ROW + ROW / 2;
    expect(await hoverLabel(page, 3, y)).toBe(labels[c2]);
    await canvas(page).focus();
    await page.keyboard.press('ArrowUp');
    await expect(tipLabel).toHaveText(labels[c1]);
    await page.keyboard.press('Escape');
    const b = boxes(normal, 'head', await graphWidth(page));
    const first = b.findIndex((x, i) => level[i] === level[c2] && x.width > 3);
    expect(await hoverLabel(page, b[first].x + 1, y)).toBe(labels[first]);
  });

  test('table rows are reached with Tab and arrows and chosen with Enter', async ({ page }) => {
    await mountCheckout(page, frames().checkoutDiff);
    const names = col<string>(frames().checkoutFunctions[0], 'function')!;
    const rows = page.getByTestId(p.tableRow);
    await expect(rows.first()).toBeVisible();
    await rows.first().focus();
    await page.keyboard.press('ArrowDown');
    await page.keyboard.press('Enter');
    await expect(page.getByTestId(p.search)).toHaveValue(names[1]);
    await expect(rows.nth(1)).toHaveAttribute('aria-selected', 'true');
  });
});
