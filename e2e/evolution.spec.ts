// Browser tests of the evolution matrix view on frames the backend computes
// at test time from the seeded demo (checkout-service regresses at 1.7.0 in
// checkout/pricing.ApplyDiscounts; ios-app swaps an image codec at 1.5.0).
import { Locator, Page, expect, test } from '@playwright/test';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

import { DataFrameJSON } from '@grafana/data';

import { selectors } from '../src/selectors';

const sel = selectors.evolution;
import { repo } from './backend';
import { docImage } from './docImage';
import { frames as e2eFrames } from './frames';
import { buildHarness } from './evolution/build';
import type { EvolutionHarness } from './evolution/main';

const url = pathToFileURL(join(__dirname, 'evolution', 'index.html')).href;
let frames: Record<'checkout' | 'ios' | 'changepoints', DataFrameJSON[]>;

// The frames come from the seeded demo of global-setup.ts.
test.beforeAll(async () => {
  test.setTimeout(180_000);
  await buildHarness();
  const set = e2eFrames();
  frames = { checkout: set.checkoutEvolution, ios: set.iosEvolution, changepoints: set.checkoutChangepoints };
});

/** A matrix row of the "evolution" frame: the test's own oracle. */
interface Cell {
  component: string;
  kind: string;
  build: string;
  share: number;
  change: number | null;
  modified: number;
  /** The test of change across runs; null where untested. */
  significant: boolean | null;
}

function cells(set: DataFrameJSON[]): Cell[] {
  const f = set.find((x) => x.schema?.name === 'evolution')!;
  const names = f.schema!.fields.map((x) => x.name);
  const col = (n: string) => f.data!.values[names.indexOf(n)] as unknown[];
  return col('component').map((c, i) => ({
    component: c as string,
    kind: col('kind')[i] as string,
    build: col('build')[i] as string,
    share: col('share')[i] as number,
    change: col('change')[i] as number | null,
    modified: col('modified')[i] as number,
    significant: col('significant')[i] as boolean | null,
  }));
}

type MountExtra = Pick<Parameters<EvolutionHarness['mount']>[0], 'options' | 'theme'>;

async function mount(page: Page, set: DataFrameJSON[], extra: MountExtra = {}) {
  await page.goto(url);
  await page.waitForFunction(() => Boolean(window.evolution));
  // A JSON string crosses into the page much faster than the same objects.
  const isEvolution = await page.evaluate(
    ([f, o]) => window.evolution.mount({ frames: JSON.parse(f), width: 1280, height: 800, ...o }),
    [JSON.stringify(set), extra] as const
  );
  expect(isEvolution).toBe(true);
  await expect(page.getByTestId(sel.root)).toBeVisible();
}

const row = (page: Page, component: string) =>
  page.locator(`[data-testid="${sel.row}"][data-component="${component}"]`);
const glyph = (page: Page, component: string, build: string) =>
  page.locator(`[data-testid="${sel.glyph}"][data-component="${component}"][data-build="${build}"]`);

async function expand(page: Page, component: string) {
  await row(page, component).getByTestId(sel.toggle).click();
}

const rgb = async (l: Locator, attr: 'fill' | 'stroke') =>
  ((await l.getAttribute(attr)) ?? '').match(/\d+/g)!.map(Number);
const isRed = ([r, g, b]: number[]) => r > 150 && g < 90 && b < 90;
const isGrey = ([r, g, b]: number[]) => Math.max(r, g, b) - Math.min(r, g, b) < 20;
const isBlue = ([r, g, b]: number[]) => b > 180 && b > r + 60 && b > g + 40;
const width = async (l: Locator) => Number(await l.getAttribute('width'));
const height = async (l: Locator) => Number(await l.getAttribute('height'));

test('top-level components are sorted by peak share and absent builds have no glyph', async ({ page }) => {
  await mount(page, frames.checkout);
  const all = cells(frames.checkout);
  const peak = new Map<string, number>();
  for (const c of all.filter((x) => x.kind === 'package')) {
    peak.set(c.component, Math.max(peak.get(c.component) ?? 0, c.share));
  }
  const shown = await page
    .locator(`[data-testid="${sel.row}"][data-depth="0"]`)
    .evaluateAll((els) => els.map((e) => e.getAttribute('data-component')));
  const shares = shown.map((c) => peak.get(c!)!);
  expect(shares.length).toBeGreaterThan(5);
  expect([...shares].sort((a, b) => b - a)).toEqual(shares);

  // regexp arrives with the regression: glyphs exactly where the frame has rows.
  const present = all.filter((c) => c.component === 'regexp' && c.kind === 'package').map((c) => c.build);
  expect(present.length).toBeGreaterThan(0);
  expect(present).not.toContain('1.0.0');
  const drawn = await page
    .locator(`[data-testid="${sel.glyph}"][data-component="regexp"]`)
    .evaluateAll((els) => els.map((e) => e.getAttribute('data-build')));
  expect(drawn).toEqual(present);
});

test('the 1.7.0 regression in ApplyDiscounts is red, modified, and tall', async ({ page }) => {
  await mount(page, frames.checkout);
  await expand(page, 'checkout/pricing');
  const method = 'checkout/pricing.ApplyDiscounts';
  const byBuild = new Map(
    cells(frames.checkout)
      .filter((c) => c.component === method)
      .map((c) => [c.build, c])
  );
  expect(byBuild.get('1.7.0')!.modified).toBeGreaterThan(0);
  expect(byBuild.get('1.6.0')!.modified).toBe(0);

  const at = (b: string) => glyph(page, method, b);
  expect(isRed(await rgb(at('1.7.0').getByTestId(sel.bottom), 'fill'))).toBe(true);
  expect(isRed(await rgb(at('1.6.0').getByTestId(sel.bottom), 'fill'))).toBe(false);
  expect(await width(at('1.7.0').getByTestId(sel.top))).toBeGreaterThan(await width(at('1.6.0').getByTestId(sel.top)));
  expect(await height(at('1.7.0').getByTestId(sel.bottom))).toBeGreaterThan(
    2 * (await height(at('1.6.0').getByTestId(sel.bottom)))
  );
  // The first build has nothing to compare with: neutral, not coloured (the
  // theme's box colours, as the view draws absent comparisons).
  expect(byBuild.get('1.0.0')!.change).toBeNull();
  const colors = await page.evaluate(() => window.evolution.themeColors('dark'));
  const neutral = at('1.0.0').getByTestId(sel.bottom);
  await expect(neutral).toHaveAttribute('fill', colors.background.secondary);
  await expect(neutral).toHaveAttribute('stroke', colors.border.strong);

  await at('1.7.0').getByTestId(sel.bottom).hover();
  const tip = page.getByTestId(sel.tooltip);
  await expect(tip).toContainText(method);
  await expect(tip).toContainText(`+${(byBuild.get('1.7.0')!.change! * 100).toFixed(2)}%`);
  await expect(tip.locator('td[data-field="Modified methods"]')).toHaveText(String(byBuild.get('1.7.0')!.modified));
  await expect(tip.getByTestId(sel.changeList)).toContainText(method);
});

/** A significant row of the "changepoints" frame the evolution answer carries: the test's oracle. */
interface ChangeRow {
  function: string;
  build: string;
  before: number;
  after: number;
  change: number;
  pValue: number;
}

function changePoints(set: DataFrameJSON[]): ChangeRow[] {
  const f = set.find((x) => x.schema?.name === 'changepoints')!;
  const names = f.schema!.fields.map((x) => x.name);
  const col = (n: string) => f.data!.values[names.indexOf(n)] as unknown[];
  return col('function')
    .map((fn, i) => ({
      function: fn as string,
      build: col('build')[i] as string,
      before: col('before')[i] as number,
      after: col('after')[i] as number,
      change: col('change')[i] as number,
      pValue: col('pValue')[i] as number,
      significant: col('significant')[i] as boolean,
    }))
    .filter((r) => r.significant);
}

test('a change point marks the glyph where it starts, for the method and its ancestors', async ({ page }) => {
  await mount(page, frames.checkout);
  const method = 'checkout/pricing.ApplyDiscounts';
  const cp = changePoints(frames.checkout).find((r) => r.function === method)!;
  expect(cp.build).toBe('1.7.0');
  expect(cp.change).toBeGreaterThan(0.1);
  const bar = (component: string, build: string) => glyph(page, component, build).getByTestId(sel.changePoint);
  // The package shows its method's change before it is expanded.
  await expect(bar('checkout/pricing', '1.7.0')).toHaveCount(1);
  await expect(bar('checkout/pricing', '1.6.0')).toHaveCount(0);
  await expand(page, 'checkout/pricing');
  await expect(bar(method, '1.7.0')).toHaveCount(1);
  expect(isRed(await rgb(bar(method, '1.7.0'), 'fill'))).toBe(true);
  for (const b of ['1.6.0', '1.8.0']) {
    await expect(bar(method, b)).toHaveCount(0);
  }
  // Every bar drawn is at the build of a significant change point; a method's is its own.
  const drawn = await page
    .locator(`[data-testid="${sel.glyph}"]:has([data-testid="${sel.changePoint}"])`)
    .evaluateAll((els) => els.map((e) => ['component', 'kind', 'build'].map((a) => e.getAttribute(`data-${a}`)!)));
  expect(drawn.length).toBeGreaterThan(1);
  const all = changePoints(frames.checkout);
  for (const [component, kind, build] of drawn) {
    expect(all.some((r) => r.build === build && (kind !== 'method' || r.function === component))).toBe(true);
  }

  await bar(method, '1.7.0').hover();
  const list = page.getByTestId(sel.tooltip).getByTestId(sel.changePointList);
  await expect(list).toContainText(method);
  await expect(list).toContainText(`+${(cp.change * 100).toFixed(2)}%`);
  const p = cp.pValue;
  await expect(list).toContainText(p < 1e-15 ? 'p < 1e-15' : `p = ${p < 1e-4 ? p.toExponential(1) : p.toPrecision(2)}`);
  // Tiny p-values print as a bound, never with float noise such as "p = 1.7e-92".
  await expect(list).not.toContainText(/e-(1[6-9]|[2-9]\d|\d{3})/);
  await expect(list).toContainText('→');
});

test("the regressions table's link opens Build comparison on the change: base before, head at it, function in focus", async ({
  page,
}) => {
  const dashboard = JSON.parse(readFileSync(join(repo, 'provisioning', 'dashboards', 'builds-over-time.json'), 'utf8'));
  const panel = dashboard.panels.find(
    (p: { targets: Array<{ queryType: string }> }) => p.targets[0].queryType === 'changepoints'
  );
  await page.goto(url);
  await page.waitForFunction(() => Boolean(window.evolution));
  await page.evaluate(
    ([f, c]) =>
      window.evolution.mountTable({
        frame: JSON.parse(f),
        fieldConfig: c,
        vars: { datasource: 'flamediff', app: 'checkout-service' },
      }),
    [JSON.stringify(frames.changepoints[0]), panel.fieldConfig] as const
  );
  const method = 'checkout/pricing.ApplyDiscounts';
  const cp = changePoints(frames.changepoints).find((r) => r.function === method)!;
  const link = page.getByRole('link', { name: method });
  await expect(link).toHaveCount(1);
  const href = new URL((await link.getAttribute('href'))!, 'http://grafana.local');
  expect(href.pathname).toBe('/d/flamediff-build-comparison/build-comparison');
  expect(Object.fromEntries(href.searchParams)).toEqual({
    'var-datasource': 'flamediff',
    'var-app': 'checkout-service',
    'var-base': '1.6.0',
    'var-head': cp.build,
    'var-function': method,
  });
  // A plain link (no targetBlank): Grafana opens it in the same tab.
  expect(await link.getAttribute('target')).toBeNull();
});

test("only the cells of the demo's real changes keep a colour; the toggle brings the noise back", async ({ page }) => {
  await mount(page, frames.checkout);
  // Every component on ApplyDiscounts' call path: the demo's one real change (at 1.7.0).
  const onPath = ['net/http', 'checkout/api', 'checkout/cart', 'checkout/pricing'];
  for (const p of onPath) {
    await expand(page, p);
  }
  const coloured = async () =>
    page.getByTestId(sel.glyph).evaluateAll((els) =>
      els
        .map((g) => {
          const fill = g.querySelector('[data-testid="evolution-glyph-bottom"]')!.getAttribute('fill') ?? '';
          const [r, gg, b] = (fill.match(/\d+/g) ?? []).map(Number);
          const grey = !fill.startsWith('rgb') || Math.max(r, gg, b) - Math.min(r, gg, b) < 20;
          return grey ? '' : `${g.getAttribute('data-component')}@${g.getAttribute('data-build')}`;
        })
        .filter((k) => k !== '')
    );
  const kept = await coloured();
  expect(kept).toContain('checkout/pricing.ApplyDiscounts@1.7.0');
  expect(kept).toContain('checkout/pricing@1.7.0');
  for (const k of kept) {
    const [component, build] = k.split('@');
    expect(build, k).toBe('1.7.0');
    expect(
      onPath.some((p) => component.startsWith(p)),
      k
    ).toBe(true);
  }
  // The frame's oracle: a coloured cell is a significant one.
  const significant = new Set(
    cells(frames.checkout)
      .filter((c) => c.significant)
      .map((c) => `${c.component}@${c.build}`)
  );
  expect(kept.every((k) => significant.has(k))).toBe(true);

  // The tooltip gives the test: p and q, and the verdict.
  await glyph(page, 'checkout/pricing.ApplyDiscounts', '1.7.0').getByTestId(sel.bottom).hover();
  await expect(page.getByTestId(sel.tooltip).locator('td[data-field="p / q"]')).toHaveText(/^\S+ \/ \S+$/);
  await expect(page.getByTestId(sel.tooltip)).toContainText('significant across runs');
  await expect(glyph(page, 'checkout/pricing.ApplyDiscounts', '1.6.0')).toHaveAttribute(
    'aria-label',
    /not significant across runs/
  );

  // Off (by keyboard): run-to-run noise paints most of the matrix again.
  const toggle = page.getByTestId(sel.significantOnly).getByRole('switch');
  await toggle.focus();
  await page.keyboard.press('Space');
  await expect(toggle).not.toBeChecked();
  const all = await coloured();
  expect(all.length).toBeGreaterThan(3 * kept.length);
  expect(all.some((k) => !k.endsWith('@1.7.0'))).toBe(true);
});

test('expand and collapse show and hide children', async ({ page }) => {
  await mount(page, frames.checkout);
  const children = cells(frames.checkout).filter(
    (c) => c.kind !== 'package' && c.component.startsWith('checkout/pricing.')
  );
  await expect(row(page, 'checkout/pricing.ApplyDiscounts')).toHaveCount(0);
  await expand(page, 'checkout/pricing');
  await expect(row(page, 'checkout/pricing.ApplyDiscounts')).toHaveAttribute('data-depth', '1');
  await expect(row(page, 'checkout/pricing.Rule')).toHaveAttribute('data-kind', 'class');
  await expect(row(page, 'checkout/pricing.(*Rule).Match')).toHaveCount(0);
  await expand(page, 'checkout/pricing.Rule');
  await expect(row(page, 'checkout/pricing.(*Rule).Match')).toHaveAttribute('data-depth', '2');
  await expect(page.locator(`[data-testid="${sel.row}"][data-component^="checkout/pricing."]`)).toHaveCount(
    new Set(children.map((c) => c.component)).size
  );
  await expand(page, 'checkout/pricing');
  await expect(page.locator(`[data-testid="${sel.row}"][data-component^="checkout/pricing."]`)).toHaveCount(0);
});

test('a build label opens its execution timeline', async ({ page }) => {
  await mount(page, frames.checkout);
  await page.locator(`[data-testid="${sel.build}"][data-build="1.7.0"]`).click();
  const tl = page.getByTestId(sel.timeline);
  await expect(tl).toHaveAttribute('data-build', '1.7.0');
  // regexp only runs from 1.7.0 on: in its timeline, not in 1.6.0's.
  await expect(tl.locator(`[data-testid="${sel.timelineRow}"][data-component="regexp"]`)).toHaveCount(1);
  const frameCount = await tl
    .locator(`[data-testid="${sel.timelineRow}"][data-component="checkout/pricing"] rect`)
    .count();
  expect(frameCount).toBeGreaterThan(1);
  await page.locator(`[data-testid="${sel.build}"][data-build="1.6.0"]`).click();
  await expect(tl).toHaveAttribute('data-build', '1.6.0');
  await expect(tl.locator(`[data-testid="${sel.timelineRow}"][data-component="regexp"]`)).toHaveCount(0);
  await page.getByTestId(sel.close).click();
  await expect(tl).toHaveCount(0);
});

test('a glyph opens its added (blue) and removed (grey) call edges', async ({ page }) => {
  await mount(page, frames.checkout);
  await expand(page, 'checkout/pricing');
  await glyph(page, 'checkout/pricing.ApplyDiscounts', '1.7.0').getByTestId(sel.bottom).click();
  const added = page.locator(`[data-testid="${sel.edgeLine}"][data-status="added"]`);
  await expect(added.first()).toBeVisible();
  await expect(page.locator(`[data-testid="${sel.edge}"][data-callee="regexp.MustCompile"]`)).toHaveAttribute(
    'data-status',
    'added'
  );
  expect(isBlue(await rgb(added.first(), 'stroke'))).toBe(true);

  await mount(page, frames.ios);
  await expand(page, 'ImageKit');
  await expand(page, 'ImageKit.ImageDecoder');
  await glyph(page, 'ImageKit.ImageDecoder.decode(_:)', '1.5.0').getByTestId(sel.bottom).click();
  const removed = page.locator(`[data-testid="${sel.edgeLine}"][data-status="removed"]`);
  await expect(removed).toHaveCount(1);
  expect(isGrey(await rgb(removed, 'stroke'))).toBe(true);
  await expect(page.locator(`[data-testid="${sel.edge}"][data-status="removed"]`)).toHaveAttribute(
    'data-callee',
    'ImageKit.PNGCodec.inflate(_:)'
  );
  expect(isBlue(await rgb(page.locator(`[data-testid="${sel.edgeLine}"][data-status="added"]`), 'stroke'))).toBe(true);
});

test('colour-blind palette draws faster cells blue, in the light theme', async ({ page }) => {
  // ios-app's codec swap at 1.5.0: the largest significant fall of a package.
  await mount(page, frames.ios, { options: { palette: 'colorBlind' }, theme: 'light' });
  const fastest = cells(frames.ios)
    .filter((c) => c.kind === 'package' && c.change !== null && c.significant)
    .reduce((a, b) => (b.change! < a.change! ? b : a));
  expect(fastest.change!).toBeLessThan(-0.1);
  expect(isBlue(await rgb(glyph(page, fastest.component, fastest.build).getByTestId(sel.bottom), 'fill'))).toBe(true);
  // Theme text colours: dark labels on the light theme.
  const label = await row(page, fastest.component).evaluate((el) => getComputedStyle(el).color);
  expect(Math.max(...label.match(/\d+/g)!.slice(0, 3).map(Number))).toBeLessThan(100);
});

test('500 components x 50 builds: only the rows in view are drawn, all reachable by scrolling', async ({ page }) => {
  await page.goto(url);
  await page.waitForFunction(() => Boolean(window.evolution));
  const ms = await page.evaluate(() => window.evolution.mountSynthetic({ components: 500, builds: 50 }));
  test.info().annotations.push({ type: 'first paint 500x50 (ms)', description: ms.toFixed(0) });
  const glyphs = page.getByTestId(sel.glyph);
  const drawn = await glyphs.count();
  expect(drawn).toBeGreaterThan(0);
  expect(drawn).toBeLessThan((500 * 50) / 5);
  await expect(row(page, 'pkg499')).toHaveCount(0);
  await expect(glyph(page, 'pkg0', 'b49')).toHaveCount(0);
  await page.getByTestId(sel.matrix).evaluate((el) => el.scrollTo(el.scrollWidth, el.scrollHeight));
  await expect(row(page, 'pkg499')).toBeVisible();
  await expect(glyph(page, 'pkg499', 'b49')).toBeVisible();
});

test('screenshot of the seeded checkout-service matrix', async ({ page }) => {
  await mount(page, frames.checkout);
  await expand(page, 'checkout/pricing');
  await glyph(page, 'checkout/pricing.ApplyDiscounts', '1.7.0').getByTestId(sel.bottom).click();
  await glyph(page, 'checkout/pricing.ApplyDiscounts', '1.7.0').getByTestId(sel.bottom).hover();
  await expect(page.getByTestId(sel.tooltip)).toBeVisible();
  await page.screenshot({ path: docImage('evolution.png') });
});
