// Browser benchmark (npm run bench): a generated 1-million-node diff frame in
// Debian's Chromium; time to the first drawn frame and the median frame time
// while zooming and panning, Flamediff's panel versus @grafana/flamegraph;
// then the call tree's first render, expand, sort and scroll at TREE_NODES.
// A step's frame time is the main-thread work it causes: the event's own
// dispatch (React renders discrete events synchronously, in a microtask)
// plus the work inside the next animation frame, between a callback queued
// before the event and one queued after it. Waiting for vsync is excluded.
// FLAMEDIFF_BENCH_BEFORE=DIR names a harness page built from other code
// (DIR/index.html, DIR/dist/harness.js): the bench then alternates its first
// frames (graph and split view) and zoom/pan frame times with this
// checkout's, BENCH_ROUNDS times, for a comparison in one sitting. To build
// one from another checkout's commit:
//   mkdir /tmp/before && git -C OTHER archive COMMIT | tar -x -C /tmp/before && ln -s "$PWD/node_modules" /tmp/before/
//   (cd /tmp/before && node e2e/harness/build.mjs)   # then DIR=/tmp/before/e2e/harness
import { execFileSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { loadavg } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

import { chromium } from 'playwright-core';

const NODES = Number(process.env.BENCH_NODES || 1_000_000);
const STEPS = Number(process.env.BENCH_STEPS || 40);
const TREE_NODES = (process.env.BENCH_TREE_NODES || '20000,1000000').split(',').map(Number);
const ROUNDS = Number(process.env.BENCH_ROUNDS || 5);
const WIDTH = 1200;
const HEIGHT = 700;
// The version the harness bundles (package.json's devDependencies).
const grafanaFlameGraph = createRequire(import.meta.url)('@grafana/flamegraph/package.json').version;
const url = pathToFileURL(join(dirname(fileURLToPath(import.meta.url)), '..', 'harness', 'index.html')).href;

/** Runs in the page: window.benchMeasure(fire) is the main-thread time of fire() and of the frame it causes, in ms. */
function installMeasure() {
  window.benchMeasure = async (fire) => {
    let start = 0;
    requestAnimationFrame(() => {
      start = performance.now();
    });
    const t0 = performance.now();
    fire();
    await Promise.resolve();
    const sync = performance.now() - t0;
    const end = await new Promise((ok) => requestAnimationFrame(() => ok(performance.now())));
    await new Promise((ok) => requestAnimationFrame(() => ok()));
    return sync + (end - start);
  };
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

async function open(browser, which, nodes = NODES, layout = 'graph', harness = url) {
  const page = await browser.newPage({ viewport: { width: WIDTH + 40, height: HEIGHT + 200 } });
  page.on('pageerror', (e) => console.error(`${which}: page error: ${e.message}`));
  await page.addInitScript(installMeasure);
  await page.goto(harness);
  await page.waitForFunction(() => Boolean(window.harness));
  const firstDraw = await page.evaluate((p) => window.harness.mountBig(p), {
    nodes,
    which,
    width: WIDTH,
    height: HEIGHT,
    layout,
  });
  return { page, firstDraw };
}

/** Flamediff: ctrl+wheel zoom steps around the middle, then drag-pan steps; each step until painted. */
async function flamediffFrames(page) {
  return page.evaluate(async (steps) => {
    const measure = window.benchMeasure;
    const canvas = document.querySelector('[data-testid="flamediff-canvas"]');
    const r = canvas.getBoundingClientRect();
    const at = (x, y) => ({ clientX: r.left + x, clientY: r.top + y, bubbles: true });
    const wheel = (x, deltaY) =>
      canvas.dispatchEvent(new WheelEvent('wheel', { ...at(x, 60), deltaY, ctrlKey: true, cancelable: true }));
    const times = [];
    for (let i = 0; i < steps; i++) {
      // Zoom in (first half) then out again, around a point left of the middle.
      times.push(await measure(() => wheel(r.width * 0.4, i < steps / 2 ? -120 : 120)));
    }
    // Zoom in a little so that there is room to pan, then drag.
    for (let i = 0; i < 6; i++) {
      wheel(r.width * 0.5, -200);
    }
    canvas.dispatchEvent(new MouseEvent('mousedown', at(r.width / 2, 100)));
    for (let i = 0; i < steps; i++) {
      const x = r.width / 2 + (i < steps / 2 ? -10 : 10) * ((i % (steps / 2)) + 1);
      times.push(await measure(() => canvas.dispatchEvent(new MouseEvent('mousemove', at(x, 100 + (i % 5))))));
    }
    canvas.dispatchEvent(new MouseEvent('mouseup', at(r.width / 2, 100)));
    return times;
  }, STEPS);
}

/**
 * @grafana/flamegraph has no wheel zoom or pan: it zooms through its context
 * menu ("Focus block"). A step is the click on "Focus block" until painted.
 */
async function grafanaFrames(page) {
  const canvas = page.locator('canvas[data-testid="flameGraph"]');
  const times = [];
  const box = await canvas.boundingBox();
  for (let i = 0; i < Math.min(STEPS, 12); i++) {
    // Alternate between a block on the second level and the root to zoom back out.
    const x = box.x + box.width * (i % 2 ? 0.02 : 0.1 + 0.06 * (i % 10));
    await page.mouse.click(x, box.y + (i % 2 ? 5 : 30));
    const focus = page.getByText('Focus block', { exact: true });
    await focus.waitFor();
    times.push(await focus.evaluate((el) => window.benchMeasure(() => el.click())));
  }
  return times;
}

/**
 * The call tree (layout "tree"): opens the first rows with the keyboard
 * (`*` opens a row's siblings, Right enters), then times each step until
 * painted: Right on a closed row (expand), a header click (sort, by the
 * head total and back to the change), and scrolling by 30 rows.
 */
async function treeSteps(page) {
  return page.evaluate(
    async (steps) => {
      const measure = window.benchMeasure;
      const grid = document.querySelector('[role="treegrid"]');
      const focused = () => grid.querySelector('[role="row"]:focus') ?? grid.querySelector('[role="row"][aria-level]');
      const key = (k) => focused().dispatchEvent(new KeyboardEvent('keydown', { key: k, bubbles: true }));
      focused().focus();
      for (let l = 0; l < 6; l++) {
        key('*');
        key('ArrowRight');
        await new Promise((ok) => requestAnimationFrame(ok));
      }
      const expand = [];
      for (let i = 0; i < steps; i++) {
        // The next closed row with children below the focused one, then Right on it.
        let row = focused();
        while (row && row.getAttribute('aria-expanded') !== 'false') {
          key('ArrowDown');
          await Promise.resolve();
          row = focused();
        }
        expand.push(await measure(() => key('ArrowRight')));
      }
      const sort = [];
      const header = (c) => grid.querySelector(`button[data-column="${c}"]`);
      for (let i = 0; i < steps; i++) {
        sort.push(await measure(() => header(i % 2 ? 'delta' : 'headTotal').click()));
      }
      const scroll = [];
      const scroller = grid.querySelector('[role="rowgroup"]').parentElement;
      for (let i = 0; i < steps; i++) {
        scroll.push(await measure(() => (scroller.scrollTop += (i < steps / 2 ? 1 : -1) * 30 * 22)));
      }
      return { expand, sort, scroll, rows: Number(grid.getAttribute('data-rows')) };
    },
    Math.min(STEPS, 20)
  );
}

const load = () => loadavg()[0].toFixed(1);

/** compare alternates the first frames and zoom/pan frame times of the other code's harness and this one's. */
async function compare(browser, dir) {
  const pages = [
    ['before', pathToFileURL(join(resolve(dir), 'index.html')).href],
    ['this', url],
  ];
  console.log(
    `first drawn frame, ${NODES.toLocaleString('en')} nodes, ${WIDTH}x${HEIGHT}: before (${dir}) and this checkout alternating, ${ROUNDS} rounds`
  );
  console.log('round  load   code     graph       split       median frame (zoom/pan)');
  const all = { before: { graph: [], split: [], frame: [] }, this: { graph: [], split: [], frame: [] } };
  for (let r = 1; r <= ROUNDS; r++) {
    for (const [name, harness] of pages) {
      const graph = await open(browser, 'flamediff', NODES, 'graph', harness);
      const frame = median(await flamediffFrames(graph.page));
      await graph.page.close();
      const split = await open(browser, 'flamediff', NODES, 'split', harness);
      await split.page.close();
      const row = all[name];
      row.graph.push(graph.firstDraw);
      row.split.push(split.firstDraw);
      row.frame.push(frame);
      console.log(
        `${String(r).padEnd(7)}${load().padEnd(7)}${name.padEnd(9)}${`${graph.firstDraw.toFixed(0)} ms`.padEnd(12)}${`${split.firstDraw.toFixed(0)} ms`.padEnd(12)}${frame.toFixed(1)} ms`
      );
    }
  }
  for (const name of ['before', 'this']) {
    const row = all[name];
    console.log(
      `median        ${name.padEnd(9)}${`${median(row.graph).toFixed(0)} ms`.padEnd(12)}${`${median(row.split).toFixed(0)} ms`.padEnd(12)}${median(row.frame).toFixed(1)} ms`
    );
  }
}

const chromiumPath = execFileSync('sh', ['-c', 'command -v chromium'], { encoding: 'utf8' }).trim();
const browser = await chromium.launch({
  executablePath: chromiumPath,
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'],
});
/** report measures this checkout: the panel against @grafana/flamegraph, the split view and the call tree. */
async function report(browser) {
  const results = {};
  for (const [which, frames] of [
    ['flamediff', flamediffFrames],
    ['grafana', grafanaFrames],
  ]) {
    const { page, firstDraw } = await open(browser, which);
    const times = await frames(page);
    results[which] = {
      firstDraw,
      medianFrame: median(times),
      p95Frame: [...times].sort((a, b) => a - b)[Math.floor(times.length * 0.95)],
      steps: times.length,
    };
    await page.close();
  }
  const f = results.flamediff;
  const g = results.grafana;
  console.log(`frame: ${NODES.toLocaleString('en')} nodes (diff), canvas ${WIDTH}x${HEIGHT}, ${chromiumPath}`);
  console.log('renderer                  first drawn frame   median frame (zoom/pan)   p95 frame');
  for (const [name, r] of [
    ['Flamediff panel', f],
    [`@grafana/flamegraph ${grafanaFlameGraph}`, g],
  ]) {
    console.log(
      `${name.padEnd(26)}${r.firstDraw.toFixed(0).padStart(10)} ms${r.medianFrame.toFixed(1).padStart(20)} ms${r.p95Frame.toFixed(1).padStart(18)} ms`
    );
  }
  console.log(
    `speed-up: first frame ${(g.firstDraw / f.firstDraw).toFixed(1)}x, frame time ${(g.medianFrame / f.medianFrame).toFixed(1)}x`
  );
  // The split view: base and head side by side, first drawn frame (both graphs drawn).
  const split = await open(browser, 'flamediff', NODES, 'split');
  console.log('');
  console.log(`split view (base beside head, ${WIDTH}x${HEIGHT}): first drawn frame ${split.firstDraw.toFixed(0)} ms`);
  await split.page.close();
  console.log('');
  console.log(`call tree (layout "tree", ${WIDTH}x${HEIGHT}): median (max) ms of a step until painted`);
  console.log('nodes         first render   expand           sort             scroll 30 rows   rows open');
  for (const nodes of TREE_NODES) {
    const { page, firstDraw } = await open(browser, 'flamediff', nodes, 'tree');
    const t = await treeSteps(page);
    const cell = (xs) => `${median(xs).toFixed(1)} (${Math.max(...xs).toFixed(1)})`.padEnd(17);
    console.log(
      `${nodes.toLocaleString('en').padEnd(14)}${`${firstDraw.toFixed(0)} ms`.padEnd(15)}${cell(t.expand)}${cell(t.sort)}${cell(t.scroll)}${t.rows}`
    );
    await page.close();
  }
}

try {
  if (process.env.FLAMEDIFF_BENCH_BEFORE) {
    await compare(browser, process.env.FLAMEDIFF_BENCH_BEFORE);
  } else {
    await report(browser);
  }
} finally {
  await browser.close();
}
