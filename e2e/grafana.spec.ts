import { expect, test } from '@playwright/test';

import { frames, variant } from './frames';
import { isGreen, isRed, mount, openHarness } from './harness';

// Compatibility: Grafana's own flame graph (@grafana/flamegraph: 13.0.1 here,
// the oldest declared Grafana's line in scripts/grafana-versions.sh) reads
// Flamediff's diff frames as diffs, without field errors.
test.describe("Grafana's flame graph on Flamediff frames", () => {
  test.beforeEach(async ({ page }) => {
    await openHarness(page);
  });

  test('the testdata/panel diff renders as a diff: added red, removed green', async ({ page }) => {
    await mount(page, 'mountGrafanaFlameGraph', {
      frame: variant(frames().panelDiff, 'normal'),
      width: 1200,
      height: 600,
    });
    const root = page.getByTestId('grafana-flamegraph');
    await expect(root.getByText('+100% (added)')).toBeVisible();
    await expect(root.getByText('Baseline', { exact: true })).toBeVisible();
    await expect(root.getByText('Comparison', { exact: true })).toBeVisible();
    await expect(root).not.toContainText(/missing fields|wrong type/);
    const colours = await root.getByTestId('flameGraph').evaluate((c: HTMLCanvasElement) => {
      const d = c.getContext('2d')!.getImageData(0, 0, c.width, c.height).data;
      const out: number[][] = [];
      for (let i = 0; i < d.length; i += 4 * 7) {
        out.push([d[i], d[i + 1], d[i + 2]]);
      }
      return out;
    });
    expect(colours.some(isRed)).toBe(true);
    expect(colours.some(isGreen)).toBe(true);
  });

  test('a real pprof diff with enum labels renders without field errors', async ({ page }) => {
    await mount(page, 'mountGrafanaFlameGraph', {
      frame: variant(frames().pprofDiff, 'normal'),
      width: 1200,
      height: 600,
    });
    const root = page.getByTestId('grafana-flamegraph');
    await expect(root.getByText('-100% (removed)')).toBeVisible();
    await expect(root).not.toContainText(/missing fields|wrong type/);
    await expect(root.getByText('runtime.gcBgMarkWorker', { exact: true }).first()).toBeVisible();
  });
});
