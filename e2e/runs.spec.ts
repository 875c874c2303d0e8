import { expect, test } from '@playwright/test';

import { selectors } from '../src/selectors';
import { checkout, frames } from './frames';
import { chooseRadio, mount, openHarness } from './harness';

test.beforeEach(async ({ page }) => {
  await openHarness(page);
  await mount(page, 'mountPanel', {
    frames: [...frames().checkoutDiff, ...frames().checkoutRuns],
    width: 1200,
    height: 600,
  });
  await chooseRadio(page, selectors.panel.mode, 'Runs');
});

test('run details show every seeded run and the significant regression', async ({ page }) => {
  const runs = frames().checkoutRuns.find((f) => f.schema?.name === 'runs')!;
  await expect(page.getByTestId(selectors.runs.dot)).toHaveCount(runs.data!.values[0].length);
  const summary = page.getByTestId(selectors.runs.summary);
  const stats = frames().checkoutRuns.find((f) => f.schema?.name === 'runs_summary')!;
  const col = (name: string) => stats.data!.values[stats.schema!.fields.findIndex((f) => f.name === name)];
  const change = col('change')[0] as number;
  await expect(summary).toContainText(`+${(change * 100).toFixed(2)}%`);
  await expect(summary).toContainText(col('significant')[0] ? /\bsignificant/ : /not significant/);
});

test('clicking a base run and a head run opens their comparison', async ({ page }) => {
  const dots = page.getByTestId(selectors.runs.dot);
  const compare = page.getByTestId(selectors.runs.compare);
  await expect(compare).toBeDisabled();
  const runs = frames().checkoutRuns.find((f) => f.schema?.name === 'runs')!.data!.values;
  const firstHead = (runs[0] as string[]).indexOf('head');
  // Dots may overlap: send the clicks to the dots themselves.
  await dots.nth(0).dispatchEvent('click');
  await dots.nth(firstHead).dispatchEvent('click');
  await compare.click();
  await expect
    .poll(() => page.evaluate(() => Object.fromEntries(new URLSearchParams(window.location.search))))
    .toEqual({
      'var-base_build': checkout.base,
      'var-base_run': runs[2][0],
      'var-head_build': checkout.head,
      'var-head_run': runs[2][firstHead],
    });
});
