// Keyboard and screen reader access to the evolution matrix, on frames the
// backend computes at test time from the seeded demo (checkout-service
// regresses at 1.7.0 in checkout/pricing.ApplyDiscounts, a change point).
import { Page, expect, test } from '@playwright/test';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

import { DataFrameJSON } from '@grafana/data';

import { selectors } from '../src/selectors';

const sel = selectors.evolution;
import { frames as e2eFrames } from './frames';
import { buildHarness } from './evolution/build';

const url = pathToFileURL(join(__dirname, 'evolution', 'index.html')).href;
let frames: DataFrameJSON[] = [];
const method = 'checkout/pricing.ApplyDiscounts';

// The frames come from the seeded demo of global-setup.ts.
test.beforeAll(async () => {
  test.setTimeout(180_000);
  await buildHarness();
  frames = e2eFrames().checkoutEvolution;
});

async function mount(page: Page) {
  await page.goto(url);
  await page.waitForFunction(() => Boolean(window.evolution));
  const ok = await page.evaluate(
    (f) => window.evolution.mount({ frames: JSON.parse(f), width: 1280, height: 800 }),
    JSON.stringify(frames)
  );
  expect(ok).toBe(true);
  await expect(page.getByTestId(sel.root)).toBeVisible();
}

const focused = (page: Page) => page.locator(`[data-testid="${sel.glyph}"][data-focused="true"]`);
const glyph = (page: Page, component: string, build: string) =>
  page.locator(`[data-testid="${sel.glyph}"][data-component="${component}"][data-build="${build}"]`);
const at = async (page: Page) => {
  const g = focused(page);
  await expect(g).toHaveCount(1);
  return { component: await g.getAttribute('data-component'), build: await g.getAttribute('data-build') };
};

/** The builds in column order, from the header. */
const builds = (page: Page) =>
  page.getByTestId(sel.build).evaluateAll((els) => els.map((e) => e.getAttribute('data-build')!));

test('the matrix is one tab stop with a label; arrows move a visible, announced glyph focus', async ({ page }) => {
  await mount(page);
  const matrix = page.getByTestId(sel.matrix);
  await expect(matrix).toHaveAttribute('aria-label', /Arrow keys/);
  await expect(matrix).toHaveAttribute('role', 'application');
  // The legend's Significant changes only switch comes first, then the matrix.
  await page.keyboard.press('Tab');
  await expect(page.getByTestId(sel.significantOnly).getByRole('switch')).toBeFocused();
  await page.keyboard.press('Tab');
  await expect(matrix).toBeFocused();

  // Focus lands on the top-left glyph: outlined, its tooltip shown, announced.
  const cols = await builds(page);
  const firstRow = await page.getByTestId(sel.row).first().getAttribute('data-component');
  const start = await at(page);
  expect(start.component).toBe(firstRow);
  await expect(focused(page).getByTestId(sel.focus)).toBeVisible();
  const tip = page.getByTestId(sel.tooltip);
  await expect(tip).toBeVisible();
  await expect(tip).toContainText(firstRow!);
  const live = page.getByTestId(sel.live);
  await expect(live).toHaveAttribute('aria-live', 'polite');
  await expect(live).toContainText(`${firstRow}, build ${start.build}`);
  // Every glyph carries its own label.
  await expect(focused(page)).toHaveAttribute(
    'aria-label',
    new RegExp(`build ${start.build}: time .*, share .*, change`)
  );

  // Right: the next build; End: the last; Home: back; Down: the next component.
  await page.keyboard.press('ArrowRight');
  const right = await at(page);
  expect(right.component).toBe(start.component);
  expect(cols.indexOf(right.build!)).toBeGreaterThan(cols.indexOf(start.build!));
  await page.keyboard.press('End');
  expect((await at(page)).build).toBe(cols[cols.length - 1]);
  await page.keyboard.press('Home');
  expect(await at(page)).toEqual(start);
  await page.keyboard.press('ArrowDown');
  const down = await at(page);
  expect(down.component).not.toBe(start.component);
  await expect(live).toContainText(`${down.component}, build ${down.build}`);
  await expect(tip).toContainText(down.component!);
  await page.keyboard.press('ArrowUp');
  expect((await at(page)).component).toBe(start.component);

  // Escape with no detail pane open leaves the glyph: no outline, no tooltip.
  await page.keyboard.press('Escape');
  await expect(focused(page)).toHaveCount(0);
  await expect(tip).toHaveCount(0);
  await expect(matrix).toBeFocused();
});

test('Enter opens the glyph call edges like a click, Escape closes them; change points are announced', async ({
  page,
}) => {
  await mount(page);
  const matrix = page.getByTestId(sel.matrix);
  await page.locator(`[data-testid="${sel.row}"][data-component="checkout/pricing"]`).getByTestId(sel.toggle).click();
  await matrix.focus();

  // Walk down to the method, then right to the 1.7.0 regression: by keyboard only.
  const live = page.getByTestId(sel.live);
  for (let i = 0; i < 60 && (await at(page)).component !== method; i++) {
    await page.keyboard.press('ArrowDown');
  }
  expect((await at(page)).component).toBe(method);
  await page.keyboard.press('Home');
  for (let i = 0; i < 60 && (await at(page)).build !== '1.7.0'; i++) {
    await page.keyboard.press('ArrowRight');
  }
  expect(await at(page)).toEqual({ component: method, build: '1.7.0' });
  await expect(glyph(page, method, '1.7.0').getByTestId(sel.changePoint)).toHaveCount(1);
  await expect(live).toContainText(/change point(s start| starts) here/);
  await expect(live).toContainText(
    new RegExp(`${method.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')} \\+[\\d.]+% \\(slower\\)`)
  );
  await expect(glyph(page, method, '1.7.0')).toHaveAttribute('aria-label', /change point(s start| starts) here/);

  // Enter: the call edges of this glyph, as a click shows them.
  await page.keyboard.press('Enter');
  await expect(page.getByText(`Calls 1.7.0 added or removed around ${method}`)).toBeVisible();
  await expect(matrix).toBeFocused();
  // Escape closes the pane and keeps the glyph; a second Escape leaves it.
  await page.keyboard.press('Escape');
  await expect(page.getByText(`Calls 1.7.0 added or removed around ${method}`)).toHaveCount(0);
  expect(await at(page)).toEqual({ component: method, build: '1.7.0' });
  await page.keyboard.press('Escape');
  await expect(focused(page)).toHaveCount(0);

  // A click puts the keyboard's glyph where the mouse was: arrows go on from there.
  await glyph(page, method, '1.6.0').getByTestId(sel.bottom).click();
  await expect(page.getByText(`Calls 1.6.0 added or removed around ${method}`)).toBeVisible();
  await expect(matrix).toBeFocused();
  await page.keyboard.press('ArrowRight');
  expect(await at(page)).toEqual({ component: method, build: '1.7.0' });
  await page.keyboard.press(' ');
  await expect(page.getByText(`Calls 1.7.0 added or removed around ${method}`)).toBeVisible();
});
