// The call tree's browser checks, shared by the harness, serve and the report
// (calltree.spec.ts, report.spec.ts, links.spec.ts): the keyboard walk, the
// treegrid's roles and the graph and tree in step. The oracle is the tree's
// own rows read back as numbers, and the graph's tooltip (its own hit test).
import { Locator, Page, expect } from '@playwright/test';

import { selectors } from '../src/selectors';
import { canvas, chooseRadio, hoverLabel } from './harness';

const p = selectors.panel;
export const ROW = 20;

export const tree = (page: Page) => page.getByTestId(p.tree);
export const rows = (page: Page) => page.getByTestId(p.treeRow);
export const focusedRow = (page: Page) => page.locator(`[data-testid="${p.treeRow}"]:focus`);
export const selectedRow = (page: Page) => page.locator(`[data-testid="${p.treeRow}"][aria-selected="true"]`);

/** nameOf is a row's function (its first cell's title). */
export const nameOf = (row: Locator) => row.locator('[role="gridcell"]').first().getAttribute('title');

/** percent reads a share cell ("+1.25%", "-0.5%", "0") as a number. */
export const percent = (s: string) => (s.trim() === '0' ? 0 : Number(s.replace('%', '').replace('+', '')));

/** layout picks the panel's layout. */
export async function layout(page: Page, name: 'Graph' | 'Tree' | 'Both' | 'Split'): Promise<void> {
  await chooseRadio(page, p.layout, name);
}

/** cellsOf is the text of one column (a TreeColumn) in rows. */
export function cellsOf(rowsOf: Locator, column: string): Promise<string[]> {
  return rowsOf.evaluateAll(
    (els, c) => els.map((e) => e.querySelector(`[data-column="${c}"]`)?.textContent ?? ''),
    column
  );
}

/**
 * checkRoles checks the treegrid's accessible structure: headers with
 * aria-sort, rows with level, set size and position, the top row expanded.
 */
export async function checkRoles(page: Page): Promise<void> {
  const grid = tree(page);
  await expect(grid).toHaveAttribute('role', 'treegrid');
  await expect(page.getByRole('treegrid')).toHaveCount(1);
  const headers = grid.getByRole('columnheader');
  expect(await headers.count()).toBeGreaterThanOrEqual(3);
  // A diff opens sorted by its change, the largest first.
  await expect(grid.locator('[role="columnheader"][aria-sort="descending"]')).toHaveCount(1);
  await expect(grid.locator('[role="columnheader"][aria-sort="none"]')).toHaveCount((await headers.count()) - 1);
  const top = rows(page).first();
  await expect(top).toHaveAttribute('aria-level', '1');
  await expect(top).toHaveAttribute('aria-expanded', 'true');
  await expect(top).toHaveAttribute('aria-posinset', '1');
  // The root's children: level 2, their set size their count, positions 1..n in order.
  const kids = grid.locator('[role="row"][aria-level="2"]');
  const n = await kids.count();
  expect(n).toBeGreaterThan(0);
  const places = await kids.evaluateAll((els) =>
    els.map((e) => [e.getAttribute('aria-posinset'), e.getAttribute('aria-setsize')])
  );
  expect(places).toEqual(Array.from({ length: n }, (_, k) => [String(k + 1), String(n)]));
  // Only the rows in sight are in the DOM; aria-rowcount tells the whole.
  expect(Number(await grid.getAttribute('aria-rowcount'))).toBe(Number(await grid.getAttribute('data-rows')) + 1);
}

/**
 * checkKeyboardWalk walks the tree with the keyboard: Home, Down, Right
 * (expand, then into the first child), Left (to the parent, then
 * collapse), End, and a sort by a header, checked against the rows' own
 * numbers.
 */
export async function checkKeyboardWalk(page: Page): Promise<void> {
  await rows(page).first().focus();
  await page.keyboard.press('Home');
  await expect(focusedRow(page)).toHaveAttribute('aria-level', '1');
  await page.keyboard.press('ArrowDown');
  const child = focusedRow(page);
  await expect(child).toHaveAttribute('aria-level', '2');
  await expect(child).toHaveAttribute('aria-posinset', '1');
  const name = await nameOf(child);
  // Find a closed child with children, by Down; then Right opens it, Right enters it.
  for (let k = 0; k < 30 && (await focusedRow(page).getAttribute('aria-expanded')) !== 'false'; k++) {
    await page.keyboard.press('ArrowDown');
  }
  const parent = focusedRow(page);
  await expect(parent).toHaveAttribute('aria-expanded', 'false');
  const parentName = await nameOf(parent);
  const parentLevel = Number(await parent.getAttribute('aria-level'));
  await page.keyboard.press('ArrowRight');
  await expect(focusedRow(page)).toHaveAttribute('aria-expanded', 'true');
  await page.keyboard.press('ArrowRight');
  await expect(focusedRow(page)).toHaveAttribute('aria-level', String(parentLevel + 1));
  await expect(focusedRow(page)).toHaveAttribute('aria-posinset', '1');
  // The children are sorted by |Δ|, largest first, as the header says.
  const kids = page.locator(`[data-testid="${p.treeRow}"][aria-level="${parentLevel + 1}"]`);
  const deltas = (await cellsOf(kids, 'delta')).map((s) => Math.abs(percent(s)));
  expect(deltas.length).toBeGreaterThan(0);
  expect(deltas).toEqual([...deltas].sort((a, b) => b - a));
  // Left goes back to the parent, Left again closes it.
  await page.keyboard.press('ArrowLeft');
  expect(await nameOf(focusedRow(page))).toBe(parentName);
  await page.keyboard.press('ArrowLeft');
  await expect(focusedRow(page)).toHaveAttribute('aria-expanded', 'false');
  await expect(kids).toHaveCount(0);
  // Space opens it again; End goes to the last row.
  await page.keyboard.press(' ');
  await expect(focusedRow(page)).toHaveAttribute('aria-expanded', 'true');
  await page.keyboard.press('End');
  const count = Number(await tree(page).getAttribute('data-rows'));
  await expect(focusedRow(page)).toHaveAttribute('aria-rowindex', String(count + 1));
  await page.keyboard.press('Home');
  await expect(focusedRow(page)).toHaveAttribute('aria-rowindex', '2');
  expect(name).toBeTruthy();

  // A sort by the head total, descending: the root's children by their head totals.
  const headTotal = tree(page).locator(`[data-testid="${p.treeSort}"][data-column="headTotal"]`);
  await headTotal.click();
  await expect(tree(page).locator('[aria-sort="descending"]')).toContainText('Head total');
  const level2 = page.locator(`[data-testid="${p.treeRow}"][aria-level="2"]`);
  const totals = await cellsOf(level2, 'headTotal');
  expect(totals.length).toBeGreaterThan(1);
  // Sorted by the values shown: compared in the unit the rows print (the same for siblings of one tree).
  const values = totals.map(toNumber);
  expect(values).toEqual([...values].sort((a, b) => b - a));
  // Clicked again: ascending.
  await headTotal.click();
  await expect(tree(page).locator('[aria-sort="ascending"]')).toContainText('Head total');
  const up = (await cellsOf(level2, 'headTotal')).map(toNumber);
  expect(up).toEqual([...up].sort((a, b) => a - b));
  // And back to the change, largest first.
  await tree(page).locator(`[data-testid="${p.treeSort}"][data-column="delta"]`).click();
  await expect(tree(page).locator('[aria-sort="descending"]')).toContainText('Δ');
}

const units: Record<string, number> = {
  ns: 1,
  µs: 1e3,
  us: 1e3,
  ms: 1e6,
  s: 1e9,
  min: 60e9,
  hour: 3600e9,
  B: 1,
  KiB: 1024,
  MiB: 1024 ** 2,
  GiB: 1024 ** 3,
  K: 1e3,
  Mil: 1e6,
  Bil: 1e9,
};

/** toNumber reads a formatted value ("1.25 ms", "3.2 K", "0") in its unit's base. */
export function toNumber(s: string): number {
  const m = /^\s*(-?[\d.]+)\s*(\S*)\s*$/.exec(s);
  if (!m) {
    throw new Error(`not a value: ${s}`);
  }
  const unit = m[2];
  if (unit && !(unit in units)) {
    throw new Error(`unknown unit in ${s}`);
  }
  return Number(m[1]) * (unit ? units[unit] : 1);
}

/**
 * checkTreeToGraph chooses a row of the tree (Enter) and checks the graph
 * zoomed onto it: its node spans the canvas's width at its level (the
 * graph's tooltip at both edges names it). Then a click on the graph's
 * node selects its row in the tree.
 */
export async function checkTreeAndGraph(page: Page): Promise<void> {
  const graphWidth = (await canvas(page).boundingBox())!.width;
  await rows(page).first().focus();
  await page.keyboard.press('Home');
  await page.keyboard.press('ArrowDown');
  const row = focusedRow(page);
  const name = (await nameOf(row))!;
  const level = Number(await row.getAttribute('aria-level')) - 1;
  await page.keyboard.press('Enter');
  await expect(row).toHaveAttribute('aria-selected', 'true');
  const y = level * ROW + ROW / 2;
  await expect.poll(() => hoverLabel(page, 4, y)).toBe(name);
  expect(await hoverLabel(page, graphWidth - 4, y)).toBe(name);

  // Back: a click on the root in the graph selects the root's row.
  await canvas(page).click({ position: { x: graphWidth / 2, y: ROW / 2 } });
  const root = rows(page).first();
  await expect(root).toHaveAttribute('aria-selected', 'true');
  // A click on the zoomed graph's second level selects that node's row, opened and shown.
  await canvas(page).click({ position: { x: 4, y: ROW + ROW / 2 } });
  const clicked = await hoverLabel(page, 4, ROW + ROW / 2);
  await expect(selectedRow(page)).toHaveCount(1);
  expect(await nameOf(selectedRow(page))).toBe(clicked);
  await expect(selectedRow(page)).toBeInViewport();
  await page.mouse.move(0, 0);
}

/** The graphs of the split view. */
export const splitCanvas = (page: Page, side: 'base' | 'head') =>
  page.getByTestId(side === 'base' ? p.splitBase : p.splitHead);

/** splitLabel is the tooltip's label over point (x, y) of one graph of the split. */
export async function splitLabel(page: Page, side: 'base' | 'head', x: number, y: number): Promise<string> {
  await splitCanvas(page, side).hover({ position: { x, y } });
  const tip = page.getByTestId(p.tooltip);
  await expect(tip).toBeVisible();
  return (await tip.locator('div').first().textContent()) ?? '';
}

/** drawnFrames waits until the page's pending animation frames (the canvases' redraws) have run. */
async function drawnFrames(page: Page): Promise<void> {
  await page.evaluate(() => new Promise<void>((done) => requestAnimationFrame(() => requestAnimationFrame(() => done()))));
}

/** splitPixel reads a split graph's colour at CSS pixel (x, y). */
export function splitPixel(page: Page, side: 'base' | 'head', x: number, y: number): Promise<number[]> {
  return splitCanvas(page, side).evaluate(
    (c: HTMLCanvasElement, [px, py]) => {
      const k = c.width / c.clientWidth;
      return Array.from(
        c
          .getContext('2d')!
          .getImageData(Math.round(px * k), Math.round(py * k), 1, 1)
          .data.slice(0, 3)
      );
    },
    [x, y]
  );
}

/**
 * checkSplitZoom clicks a node of the base graph's second level (at x) and
 * checks that both graphs zoomed onto it: its label at both edges of each.
 */
export async function checkSplitZoom(page: Page, x: number): Promise<string> {
  const half = (await splitCanvas(page, 'base').boundingBox())!.width;
  const y = ROW + ROW / 2;
  const label = await splitLabel(page, 'base', x, y);
  await splitCanvas(page, 'base').click({ position: { x, y } });
  for (const side of ['base', 'head'] as const) {
    await expect.poll(() => splitLabel(page, side, 4, y)).toBe(label);
    expect(await splitLabel(page, side, half - 4, y)).toBe(label);
  }
  await page.mouse.move(0, 0);
  return label;
}

/**
 * checkSplitHover zooms both graphs of a split onto the root's widest child, then hovers its first
 * child in base: that node's edge in head changes colour (the outline), and back when the pointer
 * leaves (whatever the theme's outline colour).
 */
export async function checkSplitHover(page: Page): Promise<void> {
  const half = (await splitCanvas(page, 'base').boundingBox())!.width;
  const zoomed = await checkSplitZoom(page, half / 2);
  const y = 2 * ROW + ROW / 2;
  const child = await splitLabel(page, 'base', 6, y);
  expect(await splitLabel(page, 'head', 6, y)).toBe(child);
  expect(child).not.toBe(zoomed);
  await page.mouse.move(0, 0);
  await expect(page.getByTestId(p.tooltip)).toHaveCount(0);
  // Head's own redraw after the zoom may still be pending: read it drawn (a CI run read the
  // background there, and every later read differed from it).
  await drawnFrames(page);
  const plain = await splitPixel(page, 'head', 1, y);
  await splitCanvas(page, 'base').hover({ position: { x: 6, y } });
  await expect.poll(async () => (await splitPixel(page, 'head', 1, y)).join()).not.toBe(plain.join());
  await page.mouse.move(0, 0);
  await expect(page.getByTestId(p.tooltip)).toHaveCount(0);
  await expect.poll(async () => (await splitPixel(page, 'head', 1, y)).join()).toBe(plain.join());
}
