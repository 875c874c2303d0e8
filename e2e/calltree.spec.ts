// The call tree (issue 47) in the panel harness, on the checkout diff (with
// statistics and culprits): its treegrid roles, the keyboard walk and sort,
// and the tree and the graph in step. Its sort and shape are checked against
// the frame itself (this file's oracle), not the panel's model.
import { expect, test } from '@playwright/test';

import { DataFrameJSON } from '@grafana/data';

import { selectors } from '../src/selectors';
import {
  ROW,
  checkRoles,
  checkKeyboardWalk,
  checkSplitHover,
  checkSplitZoom,
  splitCanvas,
  splitLabel,
  checkTreeAndGraph,
  layout,
  nameOf,
  percent,
  rows,
  tree,
} from './calltreeShared';
import { col, frames, labelsOf, variant } from './frames';
import { canvas, mount, openHarness } from './harness';

const p = selectors.panel;
const WIDTH = 1000;
const HEIGHT = 500;

/** childrenOf lists node i's children in the frame (pre-order levels). */
function childrenOf(frame: DataFrameJSON, i: number): number[] {
  const level = col(frame, 'level')!;
  const out: number[] = [];
  for (let j = i + 1; j < level.length && level[j] > level[i]; j++) {
    if (level[j] === level[i] + 1) {
      out.push(j);
    }
  }
  return out;
}

test.describe('the call tree in the panel', () => {
  const frame = () => variant(frames().checkoutDiff, 'normal');

  test.beforeEach(async ({ page }) => {
    await openHarness(page);
    await mount(page, 'mountPanel', {
      frames: frames().checkoutDiff,
      width: WIDTH,
      height: HEIGHT,
      options: { layout: 'both' },
    });
    await expect(tree(page)).toBeVisible();
    await expect(canvas(page)).toBeVisible();
  });

  test('is a treegrid: roles, levels, set sizes and sort headers', async ({ page }) => {
    await checkRoles(page);
    // The root's children, in the frame's numbers: sorted by |delta|, largest first (ties in frame order).
    const f = frame();
    const delta = col(f, 'delta')!;
    const labels = labelsOf(f);
    const want = childrenOf(f, 0)
      .sort((a, b) => Math.abs(delta[b]) - Math.abs(delta[a]) || a - b)
      .map((i) => labels[i]);
    const got = await tree(page)
      .locator('[role="row"][aria-level="2"]')
      .evaluateAll((els) => els.map((e) => e.querySelector('[role="gridcell"]')!.getAttribute('title')));
    expect(got).toEqual(want);
    // The Δ cell prints the frame's delta.
    const first = childrenOf(f, 0).sort((a, b) => Math.abs(delta[b]) - Math.abs(delta[a]) || a - b)[0];
    const cell = tree(page).locator('[role="row"][aria-level="2"]').first().locator('[data-column="delta"]');
    expect(percent((await cell.textContent())!)).toBeCloseTo(delta[first] * 100, 1);
  });

  test('walks with the keyboard: arrows, expand, collapse, Home, End, sort', async ({ page }) => {
    await checkKeyboardWalk(page);
  });

  test('a row chosen in the tree is zoomed in the graph, a node clicked in the graph is selected in the tree', async ({
    page,
  }) => {
    await checkTreeAndGraph(page);
  });

  test('marks culprits and greys noise as the graph does; a search keeps the matches and their callers', async ({
    page,
  }) => {
    const f = frame();
    const sig = col<boolean | null>(f, 'significant')!;
    // Open every row's path down to the first culprit: the verdict's first culprit, chosen.
    await page.getByTestId(p.culprit).first().click();
    await expect(page.getByTestId(p.treeCulprit).first()).toBeVisible();
    // A noise row (not significant, not a culprit) is grey; a significant one is not.
    const noise = await tree(page)
      .locator('[data-noise="true"]')
      .evaluateAll((els) => els.map((e) => Number(e.getAttribute('data-node'))));
    for (const i of noise) {
      expect(sig[i]).not.toBe(true);
    }
    const shown = await rows(page).evaluateAll((els) => els.map((e) => Number(e.getAttribute('data-node'))));
    const significant = shown.filter((i) => sig[i] === true);
    for (const i of significant) {
      await expect(tree(page).locator(`[data-node="${i}"]`)).not.toHaveAttribute('data-noise', 'true');
    }
    // A search: the rows left are the matches and their callers.
    await page.getByTestId(p.search).fill('pricing');
    await expect(rows(page).first()).toBeVisible();
    const labels = labelsOf(f);
    const level = col(f, 'level')!;
    const left = await rows(page).evaluateAll((els) => els.map((e) => Number(e.getAttribute('data-node'))));
    expect(left.length).toBeGreaterThan(1);
    for (const i of left) {
      let has = false;
      for (let j = i; j < level.length && (j === i || level[j] > level[i]); j++) {
        has ||= labels[j].toLowerCase().includes('pricing');
      }
      expect(has).toBe(true);
    }
    expect(await nameOf(rows(page).last())).toContain('pricing');
  });

  test('the layout toggle shows the graph, the tree or both', async ({ page }) => {
    await layout(page, 'Tree');
    await expect(canvas(page)).toHaveCount(0);
    await expect(tree(page)).toBeVisible();
    await layout(page, 'Graph');
    await expect(tree(page)).toHaveCount(0);
    await expect(canvas(page)).toBeVisible();
  });
});

test('a million-node tree opens, expands and sorts, with only the rows in sight in the DOM', async ({ page }) => {
  await openHarness(page);
  await page.evaluate(() =>
    window.harness.mountBig({ nodes: 1_000_000, which: 'flamediff', width: 1200, height: 700, layout: 'tree' })
  );
  await expect(tree(page)).toBeVisible();
  await rows(page).first().focus();
  for (let k = 0; k < 6; k++) {
    await page.keyboard.press('ArrowRight');
    await page.keyboard.press('ArrowRight');
  }
  const count = Number(await tree(page).getAttribute('data-rows'));
  expect(count).toBeGreaterThan(6);
  expect(await rows(page).count()).toBeLessThan(60);
  await page.keyboard.press('End');
  await expect(page.locator(`[data-testid="${p.treeRow}"]:focus`)).toHaveAttribute('aria-rowindex', String(count + 1));
});

test.describe('base beside head (the split view) in the panel', () => {
  const frame = () => variant(frames().checkoutDiff, 'normal');

  /** starts lays out one side of the frame (value units): each node's left edge, after its previous siblings. */
  function starts(f: DataFrameJSON, valueField: string): number[] {
    const level = col(f, 'level')!;
    const value = col(f, valueField)!;
    const next = [0];
    return level.map((l, i) => {
      const x = next[l];
      next[l] = x + value[i];
      next[l + 1] = x;
      return x;
    });
  }

  test.beforeEach(async ({ page }) => {
    await openHarness(page);
    await mount(page, 'mountPanel', {
      frames: frames().checkoutDiff,
      width: WIDTH,
      height: HEIGHT,
      options: { layout: 'split', showTable: false },
    });
    await expect(splitCanvas(page, 'base')).toBeVisible();
    await expect(splitCanvas(page, 'head')).toBeVisible();
  });

  test('one zoom and one pan: a node zoomed in base is zoomed in head, a drag moves both', async ({ page }) => {
    const f = frame();
    const level = col(f, 'level')!;
    const base = col(f, 'value')!;
    const head = col(f, 'valueRight')!;
    const labels = labelsOf(f);
    const xb = starts(f, 'value');
    const xh = starts(f, 'valueRight');
    // A second-level node on both sides with room to its left for a 100 px pan (the frame's own layout).
    const half = (await splitCanvas(page, 'base').boundingBox())!.width;
    const node = level.findIndex(
      (l, i) =>
        l === 1 &&
        base[i] > 0 &&
        head[i] > 0 &&
        xb[i] >= base[i] / 2 &&
        xh[i] >= head[i] / 2 &&
        (base[i] / base[0]) * half > 20 &&
        labels.indexOf(labels[i]) === i
    );
    expect(node).toBeGreaterThan(0);
    const x = ((xb[node] + base[node] / 2) / base[0]) * half;
    expect(await checkSplitZoom(page, x)).toBe(labels[node]);

    // A drag of 100 px to the right in base: the node's left edge is at 100 px in both graphs.
    const y = ROW + ROW / 2;
    const box = (await splitCanvas(page, 'base').boundingBox())!;
    await page.mouse.move(box.x + 200, box.y + y);
    await page.mouse.down();
    await page.mouse.move(box.x + 250, box.y + y, { steps: 5 });
    await page.mouse.move(box.x + 300, box.y + y, { steps: 5 });
    await page.mouse.up();
    for (const side of ['base', 'head'] as const) {
      await expect.poll(() => splitLabel(page, side, 106, y)).toBe(labels[node]);
      expect(await splitLabel(page, side, 94, y)).not.toBe(labels[node]);
    }
  });

  test('one keyboard: a key that moves the view in one graph moves both, Escape zooms both out; no side to choose', async ({
    page,
  }) => {
    await expect(page.getByTestId(p.side)).toHaveCount(0);
    const f = frame();
    const level = col(f, 'level')!;
    const base = col(f, 'value')!;
    const labels = labelsOf(f);
    const half = (await splitCanvas(page, 'base').boundingBox())!.width;
    const y = ROW + ROW / 2;
    const edges = async (side: 'base' | 'head') => [
      await splitLabel(page, side, 4, y),
      await splitLabel(page, side, half - 4, y),
    ];
    const full = { base: await edges('base'), head: await edges('head') };
    const zoomed = await checkSplitZoom(page, half / 2);
    expect([...full.base, ...full.head].some((l) => l !== zoomed)).toBe(true);

    // The zoomed node's sibling drawn in base, next (Right) or else previous (Left): outside the view, the keys zoom
    // base onto it, and head follows.
    const siblings = childrenOf(f, 0).filter((i) => base[i] > 0);
    const at = siblings.findIndex((i) => labels[i] === zoomed);
    expect(at).toBeGreaterThanOrEqual(0);
    const [key, sibling] =
      at + 1 < siblings.length ? ['ArrowRight', siblings[at + 1]] : ['ArrowLeft', siblings[at - 1]];
    expect(level[sibling]).toBe(1);
    await splitCanvas(page, 'base').focus();
    await page.keyboard.press(key);
    for (const side of ['base', 'head'] as const) {
      await expect.poll(() => splitLabel(page, side, 4, y)).toBe(labels[sibling]);
      expect(await splitLabel(page, side, half - 4, y)).toBe(labels[sibling]);
    }

    // Escape in head: both graphs show the whole tree again.
    await splitCanvas(page, 'head').focus();
    await page.keyboard.press('Escape');
    for (const side of ['base', 'head'] as const) {
      await expect.poll(() => edges(side)).toEqual(full[side]);
    }
  });

  test('one hover: a node hovered in base is outlined in head', async ({ page }) => {
    await checkSplitHover(page);
  });
});
