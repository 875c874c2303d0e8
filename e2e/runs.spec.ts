import { Page, expect, test } from '@playwright/test';
import { DataFrameJSON } from '@grafana/data';

import { selectors } from '../src/selectors';
import { strings } from '../src/strings';
import { checkout, frames } from './frames';
import { chooseRadio, mount, openHarness } from './harness';

async function openRuns(page: Page, runs: DataFrameJSON[]) {
  await openHarness(page);
  await mount(page, 'mountPanel', { frames: [...frames().checkoutDiff, ...runs], width: 1200, height: 600 });
  await chooseRadio(page, selectors.panel.mode, 'Runs');
}

/** summaryOf reads the runs_summary frame's first row. */
function summaryOf(runs: DataFrameJSON[]) {
  const stats = runs.find((f) => f.schema?.name === 'runs_summary')!;
  return (name: string) => stats.data!.values[stats.schema!.fields.findIndex((f) => f.name === name)][0];
}

/** The summary's line on the change ends with its state, exactly: ", significant" or ", not significant". */
const state = (page: Page) => page.getByTestId(selectors.runs.change);
const endsWith = (words: string) => new RegExp(`, ${words}$`);

test('run details show every seeded run and the significant regression', async ({ page }) => {
  await openRuns(page, frames().checkoutRuns);
  const runs = frames().checkoutRuns.find((f) => f.schema?.name === 'runs')!;
  await expect(page.getByTestId(selectors.runs.dot)).toHaveCount(runs.data!.values[0].length);
  const col = summaryOf(frames().checkoutRuns);
  expect(col('significant'), 'the seeded regression at 1.7.0 is significant').toBe(true);
  const change = col('change') as number;
  await expect(page.getByTestId(selectors.runs.summary)).toContainText(`+${(change * 100).toFixed(2)}%`);
  await expect(state(page)).toHaveText(endsWith(strings.runs.significant));
});

test('run details of two builds with the same code say the change is not significant', async ({ page }) => {
  await openRuns(page, frames().checkoutRunsUnchanged);
  const col = summaryOf(frames().checkoutRunsUnchanged);
  expect(col('significant'), 'checkout-service 1.6.0 against 1.5.0 (no code change) is not significant').toBe(false);
  await expect(state(page)).toHaveText(endsWith(strings.runs.notSignificant));
});

test('clicking a base run and a head run opens their comparison', async ({ page }) => {
  await openRuns(page, frames().checkoutRuns);
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
