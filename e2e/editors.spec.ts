import { expect, test } from '@playwright/test';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

import { selectors } from '../src/selectors';
import { repo } from './backend';
import { chooseRadio, mount, openHarness, pickOption, toggle } from './harness';

const q = selectors.query;
const c = selectors.config;

// Answers shaped like pkg/plugin/resources.go: apps are strings, builds and
// runs objects with their name under "name".
const build = (name: string, day: number) => ({
  name,
  time: `2026-09-${String(day).padStart(2, '0')}T09:00:00Z`,
  runs: 10,
});
const run = (b: string, k: number) => ({
  name: `run-0${k}`,
  build: b,
  start: '2026-09-07T09:00:00Z',
  duration: 17 + k / 10,
  sampleType: 'cpu',
  unit: 'nanoseconds',
  total: 17_000_000_000 + k,
});
const resources = {
  apps: ['checkout-service', 'ios-app'],
  'builds?app=checkout-service': [build('1.5.0', 6), build('1.6.0', 7), build('1.7.0', 8)],
  'runs?app=checkout-service&build=1.7.0': [run('1.7.0', 1), run('1.7.0', 2)],
  'runs?app=checkout-service&build=1.6.0': [run('1.6.0', 1), run('1.6.0', 2)],
  'functions?app=checkout-service&q=Apply': ['checkout/pricing.ApplyDiscounts', 'checkout/pricing.ApplyTax'],
  functions: [],
};

/** lastEmitted is the query or settings the editor passed to onChange last. */
const lastEmitted = (page: import('@playwright/test').Page) =>
  page.evaluate(() => window.harness.emitted[window.harness.emitted.length - 1]);

test('QueryEditor: pickers fed by the resources build a diff query', async ({ page }) => {
  await openHarness(page);
  await mount(page, 'mountQueryEditor', { query: {}, resources });
  await expect(page.getByTestId(q.root)).toBeVisible();
  await pickOption(page, q.app, 'checkout-service');
  await pickOption(page, q.headBuilds, '1.7.0');
  await pickOption(page, q.baseBuilds, '1.6.0');
  await pickOption(page, q.headRuns, 'run-02');
  await toggle(page, q.inverted);
  expect(await lastEmitted(page)).toEqual({
    refId: 'A',
    queryType: 'diff',
    app: 'checkout-service',
    head: { builds: ['1.7.0'], runs: ['run-02'] },
    base: { builds: ['1.6.0'], runs: [] },
    builds: [],
    inverted: true,
    collapseSystem: false,
    maxNodes: 20000,
    variants: true,
  });
  const calls = await page.evaluate(() => window.harness.calls);
  expect(calls).toEqual(
    expect.arrayContaining(['apps?', 'builds?app=checkout-service', 'runs?app=checkout-service&build=1.7.0'])
  );
});

test('QueryEditor: a timeseries query with builds, function and baseline', async ({ page }) => {
  await openHarness(page);
  await mount(page, 'mountQueryEditor', { query: { app: 'checkout-service' }, resources });
  await chooseRadio(page, q.queryType, 'timeseries');
  await expect(page.getByTestId(q.headBuilds)).toHaveCount(0);
  await pickOption(page, q.builds, '1.5.0');
  await pickOption(page, q.builds, '1.6.0');
  await page.getByTestId(q.fn).locator('input').fill('Apply');
  await page.getByRole('option', { name: 'checkout/pricing.ApplyDiscounts', exact: true }).click();
  await pickOption(page, q.baseline, 'previous build');
  expect(await lastEmitted(page)).toMatchObject({
    queryType: 'timeseries',
    app: 'checkout-service',
    builds: ['1.5.0', '1.6.0'],
    function: 'checkout/pricing.ApplyDiscounts',
    baseline: 'previous',
  });
});

test('QueryEditor: a diff chooses its normalisation and alpha; a flame graph has neither', async ({ page }) => {
  await openHarness(page);
  await mount(page, 'mountQueryEditor', { query: { app: 'checkout-service', queryType: 'diff' }, resources });
  await chooseRadio(page, q.normalize, 'relative');
  await page.getByTestId(q.alpha).fill('0.01');
  await page.getByTestId(q.alpha).blur();
  expect(await lastEmitted(page)).toMatchObject({ queryType: 'diff', normalize: 'relative', alpha: 0.01 });
  await chooseRadio(page, q.queryType, 'flamegraph');
  await expect(page.getByTestId(q.normalize)).toHaveCount(0);
  await expect(page.getByTestId(q.alpha)).toHaveCount(0);
});

test('QueryEditor: a changepoints query with builds, minShare, minChange and alpha', async ({ page }) => {
  await openHarness(page);
  await mount(page, 'mountQueryEditor', { query: { app: 'checkout-service' }, resources });
  await chooseRadio(page, q.queryType, 'changepoints');
  await expect(page.getByTestId(q.headBuilds)).toHaveCount(0);
  await expect(page.getByTestId(q.baseBuilds)).toHaveCount(0);
  await pickOption(page, q.builds, '1.5.0');
  await pickOption(page, q.builds, '1.7.0');
  for (const [id, v] of [
    [q.minShare, '0.05'],
    [q.minChange, '0.1'],
    [q.alpha, '0.01'],
  ]) {
    await page.getByTestId(id).fill(v);
    await page.getByTestId(id).blur();
  }
  expect(await lastEmitted(page)).toMatchObject({
    queryType: 'changepoints',
    app: 'checkout-service',
    builds: ['1.5.0', '1.7.0'],
    minShare: 0.05,
    minChange: 0.1,
    alpha: 0.01,
  });
});

test("QueryEditor: the provisioned dashboard's change-point panel opens as changepoints with its builds", async ({
  page,
}) => {
  const dashboard = JSON.parse(readFileSync(join(repo, 'provisioning', 'dashboards', 'builds-over-time.json'), 'utf8'));
  const targets = dashboard.panels.flatMap((p: { targets?: Array<{ queryType: string }> }) => p.targets ?? []);
  const target = targets.find((t: { queryType: string }) => t.queryType === 'changepoints');
  expect(target).toBeDefined();
  await openHarness(page);
  // Grafana hands the editor the target as stored, with the app variable
  // already chosen on the dashboard.
  await mount(page, 'mountQueryEditor', { query: { ...target, app: 'checkout-service' }, resources });
  await expect(page.getByTestId(q.queryType).getByRole('radio', { name: 'changepoints', exact: true })).toBeChecked();
  await expect(page.getByTestId(q.builds)).toBeVisible();
  await expect(page.getByTestId(q.headBuilds)).toHaveCount(0);
  await expect(page.getByTestId(q.minShare)).toBeVisible();
  await pickOption(page, q.builds, '1.6.0');
  expect(await lastEmitted(page)).toMatchObject({ queryType: 'changepoints', builds: ['1.6.0'] });
});

test('ConfigEditor: the limits the backend reads', async ({ page }) => {
  await openHarness(page);
  await mount(page, 'mountConfigEditor', {});
  await page.getByTestId(c.maxStacks).fill('2000000');
  await page.getByTestId(c.maxQueries).fill('2');
  await page.getByTestId(c.queueTimeout).fill('45');
  await page.getByTestId(c.maxConnections).fill('8');
  await page.getByTestId(c.maxQueryMemory).fill('1024');
  const last = (await lastEmitted(page)) as { jsonData: object };
  expect(last.jsonData).toEqual({
    maxStacks: 2000000,
    maxQueries: 2,
    queueTimeout: '45',
    maxConnections: 8,
    maxQueryMemory: 1024,
  });
});

test('ConfigEditor: connection, TLS, secret password, table names and system-frame rules', async ({ page }) => {
  await openHarness(page);
  await mount(page, 'mountConfigEditor', {});
  await page.getByTestId(c.host).fill('ch.example.com');
  await page.getByTestId(c.port).fill('9440');
  await toggle(page, c.secure);
  await page.getByTestId(c.username).fill('grafana');
  await page.getByTestId(c.password).fill('s3cret');
  await page.getByTestId(c.database).fill('perf');
  await page.getByTestId(c.systemFrames).fill('^libfoo\\.\n\n^vendor/ ');
  await page.getByPlaceholder('run_stacks').fill('perf.run_stacks_all');
  await page.getByTestId(c.host).click(); // blur the rules
  const last = (await lastEmitted(page)) as { jsonData: object; secureJsonData: object };
  expect(last.jsonData).toEqual({
    host: 'ch.example.com',
    port: 9440,
    secure: true,
    username: 'grafana',
    defaultDatabase: 'perf',
    systemFrames: ['^libfoo\\.', '^vendor/'],
    tables: { runStacks: 'perf.run_stacks_all' },
  });
  expect(last.secureJsonData).toEqual({ password: 's3cret' });
  // TLS settings appear once the connection is secure.
  await expect(page.getByText('TLS CA certificate')).toBeVisible();
});

test('QueryEditor: the sandwich function, the filters and only, variables kept as typed', async ({ page }) => {
  await openHarness(page);
  await mount(page, 'mountQueryEditor', { query: { app: 'checkout-service', queryType: 'diff' }, resources });
  // The options open with a switch (by keyboard); each field applies when left (Tab).
  await expect(page.getByTestId(q.keep)).toHaveCount(0);
  await page.getByTestId(q.around).getByRole('switch').focus();
  await page.keyboard.press('Space');
  await page.getByTestId(q.keep).focus();
  await page.keyboard.type('^checkout/');
  await page.keyboard.press('Tab');
  await page.getByTestId(q.hideFrames).fill('$hide');
  await page.getByTestId(q.sandwich).focus();
  await page.keyboard.type('checkout/pricing.ApplyDiscounts');
  await page.keyboard.press('Tab');
  await chooseRadio(page, q.only, 'removed');
  expect(await lastEmitted(page)).toMatchObject({
    keep: '^checkout/',
    hideFrames: '$hide',
    sandwich: 'checkout/pricing.ApplyDiscounts',
    only: 'removed',
  });
  // Emptied, a field leaves the model; "all stacks" clears only.
  await page.getByTestId(q.keep).fill('');
  await page.getByTestId(q.keep).blur();
  await chooseRadio(page, q.only, 'all stacks');
  const last = (await lastEmitted(page)) as Record<string, unknown>;
  expect(last.keep).toBeUndefined();
  expect(last.only).toBeUndefined();
  expect(last.hideFrames).toBe('$hide');

  // functions reads the filters and only, not sandwich; runs none of them.
  await chooseRadio(page, q.queryType, 'functions');
  await expect(page.getByTestId(q.keep)).toBeVisible();
  await expect(page.getByTestId(q.sandwich)).toHaveCount(0);
  await chooseRadio(page, q.queryType, 'runs');
  await expect(page.getByTestId(q.keep)).toHaveCount(0);
  await expect(page.getByTestId(q.only)).toHaveCount(0);
});
