import { expect, test } from '@playwright/test';
import { join } from 'node:path';

import { selectors } from '../src/selectors';
import { frames } from './frames';
import { repo } from './backend';
import { canvas, chooseRadio, mount, openHarness } from './harness';

// The documentation's screenshots: the seeded checkout-service, base 1.6.0 vs head 1.7.0.
test('screenshots of the comparison and the run details', async ({ page }) => {
  await openHarness(page);
  await page.setViewportSize({ width: 1400, height: 560 });
  await mount(page, 'mountPanel', {
    frames: [...frames().checkoutDiff, ...frames().checkoutRuns],
    width: 1400,
    height: 560,
  });
  await expect(canvas(page)).toHaveAttribute('data-drawn', /\d+/);
  // The seeded regression is in the table, slower.
  await expect(page.getByTestId(selectors.panel.tableRow).filter({ hasText: 'pricing.ApplyDiscounts' })).toContainText(
    '+'
  );
  await page.screenshot({ path: join(repo, 'docs/img/comparison.png') });

  await chooseRadio(page, selectors.panel.mode, 'Runs');
  await expect(page.getByTestId(selectors.runs.summary)).toBeVisible();
  await page.screenshot({ path: join(repo, 'docs/img/run-details.png') });
});
