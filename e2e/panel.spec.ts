import { expect, test } from '@playwright/test';

import { selectors } from '../src/selectors';
import { frames, nodeBox, variant } from './frames';
import {
  canvas,
  drawnCount,
  hoverLabel,
  isGreen,
  isRed,
  mount,
  openHarness,
  pickOption,
  pixel,
  toggle,
} from './harness';

const WIDTH = 1000;
const HEIGHT = 400;
const ROW = 20;
/** A point inside a node's box, above its label's glyphs. */
const mid = (b: { x: number; y: number; width: number }) => [b.x + b.width / 2, b.y + 3] as const;

/** Nodes a side of a frame would draw in the full view: wider than 1 px (the renderer's cull). */
function wideNodes(set: 'panelDiff', name: string, side: 'head' | 'base', width: number): number {
  const f = variant(frames()[set], name);
  const cols = f.schema!.fields.map((x) => x.name);
  const v = f.data!.values[cols.indexOf(side === 'head' ? 'valueRight' : 'value')] as number[];
  return v.filter((x) => (x * width) / v[0] >= 1).length;
}

test.describe('flame graph panel on a diff of testdata/panel', () => {
  test.beforeEach(async ({ page }) => {
    await openHarness(page);
    await mount(page, 'mountPanel', {
      frames: frames().panelDiff,
      width: WIDTH,
      height: HEIGHT,
      options: { showTable: false },
    });
    await expect(canvas(page)).toBeVisible();
  });

  test('a node only in head is red, only in base green; shared nodes keep their colour across views', async ({
    page,
  }) => {
    const normal = variant(frames().panelDiff, 'normal');
    const onlyHead = mid(nodeBox(normal, 'app.newFeature', 'head', WIDTH));
    const work = mid(nodeBox(normal, 'app.work', 'head', WIDTH));
    await expect.poll(async () => isRed(await pixel(page, ...onlyHead))).toBe(true);
    const workHead = await pixel(page, ...work);

    await pickOption(page, selectors.panel.side, 'Base');
    await expect(page.getByTestId(selectors.panel.root)).toHaveAttribute('data-side', 'base');
    // The attribute comes with React's render, the pixels with the canvas's next frame.
    const onlyBase = mid(nodeBox(normal, 'app.legacyCache', 'base', WIDTH));
    await expect.poll(async () => isGreen(await pixel(page, ...onlyBase))).toBe(true);
    await expect.poll(() => pixel(page, ...mid(nodeBox(normal, 'app.work', 'base', WIDTH)))).toEqual(workHead);
    await expect(page.getByTestId(selectors.panel.legend)).toContainText('only in head');
  });

  test('head/base, inverted and collapse toggles draw the other trees', async ({ page }) => {
    const root = page.getByTestId(selectors.panel.root);
    expect(await drawnCount(page)).toBe(wideNodes('panelDiff', 'normal', 'head', WIDTH));

    await toggle(page, selectors.panel.inverted);
    await expect(root).toHaveAttribute('data-variant', 'inverted');
    await expect.poll(() => drawnCount(page)).toBe(wideNodes('panelDiff', 'inverted', 'head', WIDTH));
    // Inverted: the leaves are the first level.
    expect(await hoverLabel(page, 5, ROW + ROW / 2)).toBe('app.compute');

    await toggle(page, selectors.panel.collapse);
    await expect(root).toHaveAttribute('data-variant', 'inverted+collapsed');
    await expect.poll(() => drawnCount(page)).toBe(wideNodes('panelDiff', 'inverted+collapsed', 'head', WIDTH));

    await toggle(page, selectors.panel.inverted);
    await expect(root).toHaveAttribute('data-variant', 'collapsed');
    await expect.poll(() => drawnCount(page)).toBe(wideNodes('panelDiff', 'collapsed', 'head', WIDTH));

    await pickOption(page, selectors.panel.side, 'Base');
    await expect.poll(() => drawnCount(page)).toBe(wideNodes('panelDiff', 'collapsed', 'base', WIDTH));
  });

  test('click zooms onto a node, reset shows everything again', async ({ page }) => {
    const normal = variant(frames().panelDiff, 'normal');
    const right = WIDTH - 3;
    const level3 = 3 * ROW + ROW / 2;
    expect(await hoverLabel(page, right, level3)).toBe('runtime.entersyscall');
    await canvas(page).click({
      position: { x: mid(nodeBox(normal, 'app.work', 'head', WIDTH))[0], y: 2 * ROW + ROW / 2 },
    });
    // app.work now fills the width: its children span it.
    expect(await hoverLabel(page, 3, level3)).toBe('app.parse');
    expect(await hoverLabel(page, right, level3)).toBe('app.compute');
    await page.getByTestId(selectors.panel.reset).click();
    expect(await hoverLabel(page, right, level3)).toBe('runtime.entersyscall');
  });

  test('search highlights matches and counts them', async ({ page }) => {
    const normal = variant(frames().panelDiff, 'normal');
    const main = mid(nodeBox(normal, 'main', 'head', WIDTH));
    const before = await pixel(page, ...main);
    await page.getByTestId(selectors.panel.search).fill('app.');
    const texts = normal.schema!.fields[1].config!.type!.enum!.text as string[];
    const labelCol = normal.data!.values[1] as number[];
    const want = labelCol.filter((k) => texts[k].includes('app.')).length;
    await expect(page.getByTestId(selectors.panel.matches)).toHaveText(`${want} matches`);
    await expect.poll(() => pixel(page, ...main)).not.toEqual(before);
    expect(isRed(await pixel(page, ...mid(nodeBox(normal, 'app.newFeature', 'head', WIDTH))))).toBe(true);
  });

  test('tooltip shows head and base values, delta and share', async ({ page }) => {
    const normal = variant(frames().panelDiff, 'normal');
    const [x, y] = mid(nodeBox(normal, 'app.newFeature', 'head', WIDTH));
    expect(await hoverLabel(page, x, y)).toBe('app.newFeature');
    const tip = page.getByTestId(selectors.panel.tooltip);
    const i = (normal.data!.values[1] as number[]).findIndex(
      (k) => normal.schema!.fields[1].config!.type!.enum!.text![k] === 'app.newFeature'
    );
    const delta = (normal.data!.values[6] as number[])[i];
    await expect(tip).toContainText('Head total');
    await expect(tip).toContainText('Base total');
    await expect(tip).toContainText(`+${(delta * 100).toFixed(2)}%`);
  });
});

test('a single flame graph draws without diff controls, coloured by package', async ({ page }) => {
  await openHarness(page);
  await mount(page, 'mountPanel', { frames: frames().panelSingle, width: WIDTH, height: HEIGHT });
  expect(await drawnCount(page)).toBeGreaterThan(3);
  await expect(page.getByTestId(selectors.panel.side)).toHaveCount(0);
  await expect(page.getByTestId(selectors.panel.legend)).toHaveCount(0);
  // Without the variants option the toggles cannot switch.
  await expect(page.getByTestId(selectors.panel.inverted).getByRole('switch')).toBeDisabled();
});

test('real pprof profiles: every variant draws', async ({ page }) => {
  await openHarness(page);
  await mount(page, 'mountPanel', { frames: frames().pprofDiff, width: WIDTH, height: 600 });
  const normal = await drawnCount(page);
  await toggle(page, selectors.panel.inverted);
  await expect(page.getByTestId(selectors.panel.root)).toHaveAttribute('data-variant', 'inverted');
  await expect.poll(() => drawnCount(page)).not.toBe(normal);
});
