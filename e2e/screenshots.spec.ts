import { expect, test } from '@playwright/test';

import { selectors } from '../src/selectors';
import { docImage as shot } from './docImage';
import { checkoutModel, col, frames, labelsOf, variant } from './frames';
import { canvas, chooseRadio, mount, openHarness, toggle } from './harness';

// The documentation's screenshots: the seeded checkout-service, base 1.6.0 vs head 1.7.0.
test('screenshots of the comparison, its tooltip, a drill-down and the run details', async ({ page }) => {
  await openHarness(page);
  await page.setViewportSize({ width: 1400, height: 560 });
  await mount(page, 'mountPanel', {
    frames: [...frames().checkoutDiff, ...frames().checkoutRuns],
    query: checkoutModel(),
    width: 1400,
    height: 560,
  });
  await expect(canvas(page)).toHaveAttribute('data-drawn', /\d+/);
  // The seeded regression is in the table, slower.
  await expect(page.getByTestId(selectors.panel.tableRow).filter({ hasText: 'pricing.ApplyDiscounts' })).toContainText(
    '+'
  );
  await page.screenshot({ path: shot('comparison.png') });

  // The tooltip of the seeded regression's widest node.
  const normal = variant(frames().checkoutDiff, 'normal');
  const labels = labelsOf(normal);
  await page
    .getByTestId(selectors.panel.tableRow)
    .filter({ hasText: 'checkout/pricing.ApplyDiscounts' })
    .first()
    .click();
  const level = col(normal, 'level')![labels.indexOf('checkout/pricing.ApplyDiscounts')];
  await canvas(page).hover({ position: { x: 200, y: level * 20 + 5 } });
  await expect(page.getByTestId(selectors.panel.tooltip)).toBeVisible();
  await page.screenshot({ path: shot('tooltip.png') });

  await page.getByTestId(selectors.panel.fullDetail).click();
  await expect(page.getByTestId(selectors.panel.breadcrumb)).toBeVisible();
  await expect(page.getByTestId(selectors.panel.breadcrumb)).not.toContainText('Loading');
  await page.mouse.move(0, 0);
  await page.screenshot({ path: shot('drill-down.png') });

  await page.getByTestId(selectors.panel.breadcrumb).getByRole('button', { name: 'All' }).click();
  await chooseRadio(page, selectors.panel.mode, 'Runs');
  await expect(page.getByTestId(selectors.runs.summary)).toBeVisible();
  await page.screenshot({ path: shot('run-details.png') });
});

// The verdict and the culprits above the graph, the top culprit chosen (zoomed, its path highlighted).
test('screenshot of the verdict and the culprits lists', async ({ page }) => {
  await openHarness(page);
  await page.setViewportSize({ width: 1400, height: 640 });
  await mount(page, 'mountPanel', {
    frames: frames().checkoutDiff,
    query: checkoutModel(),
    width: 1400,
    height: 640,
  });
  await expect(canvas(page)).toHaveAttribute('data-drawn', /\d+/);
  await expect(page.getByTestId(selectors.panel.tableRow).first()).toBeVisible();
  await page.getByTestId(selectors.panel.culprit).first().click();
  await expect(page.getByTestId(selectors.panel.culprit).first()).toHaveAttribute('aria-selected', 'true');
  await page.mouse.move(0, 0);
  await page.screenshot({ path: shot('culprits.png') });
});

// The views around a culprit, queried from the real backend: the filters and callers and callees.
test('screenshots of the filters and of the callers and callees of the regression', async ({ page }) => {
  await openHarness(page);
  await page.setViewportSize({ width: 1400, height: 640 });
  await mount(page, 'mountPanel', { frames: frames().checkoutDiff, query: checkoutModel(), width: 1400, height: 640 });
  await expect(canvas(page)).toHaveAttribute('data-drawn', /\d+/);
  await page.getByTestId(selectors.panel.filters).click();
  const keep = page.getByTestId(selectors.panel.keep);
  await keep.fill('checkout/');
  await keep.press('Enter');
  await toggle(page, selectors.panel.onlyNew);
  // Only new: the base totals are gone (a zero prints as a plain 0).
  await expect(page.getByTestId(selectors.panel.tableRow).first().locator('td').nth(3)).toHaveText('0');
  await page.mouse.move(0, 0);
  await page.screenshot({ path: shot('filters.png') });

  await toggle(page, selectors.panel.onlyNew);
  await keep.fill('');
  await keep.press('Enter');
  await page
    .getByTestId(selectors.panel.tableRow)
    .filter({ hasText: 'checkout/pricing.ApplyDiscounts' })
    .first()
    .click();
  await page.getByTestId(selectors.panel.sandwichButton).click();
  await expect(page.getByTestId(selectors.panel.callees)).toHaveAttribute('data-drawn', /[1-9]/);
  await page.getByTestId(selectors.panel.callees).hover({ position: { x: 400, y: 10 } });
  await expect(page.getByTestId(selectors.panel.tooltip)).toBeVisible();
  await page.screenshot({ path: shot('callers-and-callees.png') });
});

// The call tree beside the graph, the seeded regression chosen in the tree and zoomed in the graph.
test('screenshot of the call tree', async ({ page }) => {
  await openHarness(page);
  await page.setViewportSize({ width: 1400, height: 600 });
  await mount(page, 'mountPanel', {
    frames: frames().checkoutDiff,
    query: checkoutModel(),
    width: 1400,
    height: 600,
    options: { layout: 'both' },
  });
  await expect(canvas(page)).toHaveAttribute('data-drawn', /\d+/);
  // The verdict's culprit chosen: the graph zooms onto it, the tree opens its callers and selects it.
  await page.getByTestId(selectors.panel.culprit).first().click();
  await expect(page.locator(`[data-testid="${selectors.panel.treeRow}"][aria-selected="true"]`)).toHaveCount(1);
  await page.mouse.move(0, 0);
  await page.screenshot({ path: shot('call-tree.png') });
});

// Base beside head, zoomed onto the seeded regression's caller, a node hovered in base (outlined in head).
test('screenshot of the split view', async ({ page }) => {
  await openHarness(page);
  await page.setViewportSize({ width: 1400, height: 560 });
  await mount(page, 'mountPanel', {
    frames: frames().checkoutDiff,
    query: checkoutModel(),
    width: 1400,
    height: 560,
    options: { layout: 'split' },
  });
  const base = page.getByTestId(selectors.panel.splitBase);
  await expect(base).toHaveAttribute('data-drawn', /\d+/);
  await page.getByTestId(selectors.panel.culpritsToggle).click();
  const row = page.locator(`[data-testid="${selectors.panel.culprit}"]`);
  await expect(row).toHaveCount(0);
  await base.hover({ position: { x: 300, y: 4 * 20 + 10 } });
  await expect(page.getByTestId(selectors.panel.tooltip)).toBeVisible();
  await page.screenshot({ path: shot('split.png') });
});
