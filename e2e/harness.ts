// Page helpers shared by the browser tests: open the harness page, mount
// things through window.harness, read the panel's canvas.
import { Page, expect } from '@playwright/test';

import type { HarnessApi } from './harness/main';
import { selectors } from '../src/selectors';

/** openHarness loads the harness page (built by harness/build.mjs, served by global-setup.ts). */
export async function openHarness(page: Page): Promise<void> {
  const url = process.env.FLAMEDIFF_E2E_URL;
  if (!url) {
    throw new Error('FLAMEDIFF_E2E_URL is not set: run the tests with npm run e2e (global-setup.ts)');
  }
  await page.goto(url);
  await page.waitForFunction(() => Boolean(window.harness));
}

/** mount calls one of window.harness's mount functions with JSON arguments. */
export async function mount<K extends keyof HarnessApi>(page: Page, fn: K, arg: unknown): Promise<void> {
  await page.evaluate(([f, a]) => (window.harness[f as keyof HarnessApi] as (x: unknown) => void)(a), [
    fn,
    arg,
  ] as const);
}

/** The panel's canvas. */
export const canvas = (page: Page) => page.getByTestId(selectors.panel.canvas);

/** drawnCount is how many nodes the canvas drew last (its data-drawn). */
export async function drawnCount(page: Page): Promise<number> {
  await expect(canvas(page)).toHaveAttribute('data-drawn', /\d+/);
  return Number(await canvas(page).getAttribute('data-drawn'));
}

/** pixel reads the canvas colour at CSS pixel (x, y) of the canvas. */
export async function pixel(page: Page, x: number, y: number): Promise<[number, number, number]> {
  return canvas(page).evaluate(
    (c: HTMLCanvasElement, [px, py]) => {
      const k = c.width / c.clientWidth;
      const d = c.getContext('2d')!.getImageData(Math.round(px * k), Math.round(py * k), 1, 1).data;
      return [d[0], d[1], d[2]] as [number, number, number];
    },
    [x, y]
  );
}

/** Colour classes of the diff scale's ends and its middle. */
export const isRed = ([r, g, b]: number[]) => r > 150 && g < 90 && b < 90;
export const isGreen = ([r, g, b]: number[]) => g > 120 && r < 90 && b < 90;

/** hoverLabel moves the mouse onto canvas point (x, y) and returns the tooltip's label. */
export async function hoverLabel(page: Page, x: number, y: number): Promise<string> {
  await canvas(page).hover({ position: { x, y } });
  const tip = page.getByTestId(selectors.panel.tooltip);
  await expect(tip).toBeVisible();
  return (await tip.locator('div').first().textContent()) ?? '';
}

/** pickOption opens a Grafana Select inside the element with testId and picks an option by its text. */
export async function pickOption(page: Page, testId: string, option: string): Promise<void> {
  await page.getByTestId(testId).locator('input').first().click();
  await page.getByRole('option', { name: option, exact: true }).click();
}

/**
 * toggle flips a Grafana Switch/InlineSwitch inside the element with testId
 * (its input is hidden behind a label). Grafana 13's InlineSwitch puts a
 * second label, its text, before the switch's own: the last is the switch.
 */
export async function toggle(page: Page, testId: string): Promise<void> {
  await page.getByTestId(testId).locator('label[for]').last().click();
}

/** chooseRadio picks an option of a Grafana RadioButtonGroup inside the element with testId. */
export async function chooseRadio(page: Page, testId: string, option: string): Promise<void> {
  await page.getByTestId(testId).getByRole('radio', { name: option, exact: true }).click();
}
