// Browser benchmark of the pages users open first (npm run bench:pages):
// `flamediff serve` on the seeded demo's checkout-service 1.7.0 against
// 1.6.0, opened from its URL, and a report of testdata/pprof opened from
// disk, in Debian's Chromium. Time from navigation to the first drawn diff
// (a canvas's first data-drawn: the first-paint script's drawing, else the
// panel's), with its breakdown:
//   first paint script   navigation to the first-paint script's drawing
//               ready (the mark flamediff:first): loading, inflating and
//               running the small script, without the query
//   query       serve's POST api/query, request to response (0 for a report)
//   draw        the rest: decoding the frames and drawing them
// and when the panel itself (the main script: React and Grafana's
// components) has drawn, the page taking input:
//   script      navigation to the main script mounting (the mark
//               flamediff:mount): loading, inflating and running it
//   init        of that, the running: the loader starting it (the mark
//               flamediff:run) to its mounting, its modules' start-up
//   panel       navigation to the panel's canvas drawn
//   interactive navigation to the page answering input: at the first
//               moment the panel's canvas has drawn and (serve) the query
//               editor is mounted, a mouse move over the root frame's row
//               is dispatched to the canvas; interactive is when its
//               tooltip shows. Click-to-zoom goes through the same
//               canvas's handlers, mounted with them.
// BENCH_CPU=1 traces each load and adds the main thread's CPU time (thread
// time of its tasks, less swayed by the machine's load than the wall clock)
// from navigation to the main script's run, its mount, the panel drawn and
// the hover answered; tracing slows the loads a little.
// FLAMEDIFF_BENCH_BEFORE=PATH (a flamediff binary built from other code)
// alternates that binary's pages with this checkout's, for a comparison in
// one sitting. ClickHouse: FLAMEDIFF_CLICKHOUSE_ADDR, else a private one.
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath, pathToFileURL } from 'node:url';

import { chromium } from 'playwright-core';

const ROUNDS = Number(process.env.BENCH_ROUNDS || 5);
const TRACE = process.env.BENCH_CPU === '1';
const repo = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const dir = mkdtempSync(join(tmpdir(), 'flamediff-bench-'));

const firstLine = (p) => new Promise((ok) => createInterface({ input: p.stdout }).once('line', ok));

function goBuild(pkg) {
  const out = join(dir, pkg.split('/').pop());
  execFileSync('go', ['build', '-o', out, pkg], { cwd: repo, stdio: 'inherit' });
  return out;
}

/**
 * Runs in the page: records when a canvas first reports a drawing, when the
 * panel's does, and when the page answers a hover (interactive, above);
 * editor: the page has a query editor to wait for.
 */
function watchFirstDraw({ editor }) {
  let hovered = false;
  new MutationObserver((records, observer) => {
    for (const r of records) {
      if (r.target.dataset?.drawn) {
        window.firstDrawn ??= performance.now();
        if (r.target.dataset.testid === 'flamediff-canvas' && window.panelDrawn === undefined) {
          window.panelDrawn = performance.now();
          performance.mark('bench:panel');
        }
      }
    }
    const canvas = document.querySelector('canvas[data-testid="flamediff-canvas"][data-drawn]');
    if (!hovered && canvas && (!editor || document.querySelector('[data-testid="flamediff-query-editor"]'))) {
      hovered = true;
      const r = canvas.getBoundingClientRect();
      const at = { bubbles: true, clientX: r.left + r.width / 2, clientY: r.top + 10 };
      canvas.dispatchEvent(new MouseEvent('mousemove', at));
    }
    if (hovered && document.querySelector('[data-testid="flamediff-tooltip"]')) {
      window.interactive = performance.now();
      performance.mark('bench:interactive');
      observer.disconnect();
    }
  }).observe(document, { subtree: true, childList: true, attributes: true, attributeFilter: ['data-drawn'] });
}

async function timeLoad(browser, url, editor) {
  const page = await browser.newPage({ viewport: { width: 1400, height: 800 } });
  const problems = [];
  page.on('console', (m) => ['error', 'warning'].includes(m.type()) && problems.push(`${m.type()}: ${m.text()}`));
  page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
  await page.addInitScript(watchFirstDraw, { editor });
  if (TRACE) {
    await browser.startTracing(page, { categories: ['toplevel', 'blink.user_timing', '__metadata'] });
  }
  await page.goto(url);
  await page.waitForFunction(() => window.interactive !== undefined, undefined, { timeout: 60_000 });
  const cpu = TRACE ? mainThreadCPU(JSON.parse((await browser.stopTracing()).toString()).traceEvents) : undefined;
  const t = await page.evaluate(() => {
    const mark = (name) => performance.getEntriesByName(name)[0]?.startTime ?? NaN;
    const query = performance.getEntriesByType('resource').find((r) => r.name.endsWith('/api/query'));
    return {
      total: window.firstDrawn,
      panel: window.panelDrawn,
      interactive: window.interactive,
      // Before the first-paint script there is no flamediff:first: the main script drew first.
      first: mark('flamediff:first'),
      script: mark('flamediff:mount'),
      run: mark('flamediff:run'),
      query: query ? query.responseEnd - query.startTime : 0,
      queryEnd: query ? query.responseEnd : 0,
    };
  });
  await page.close();
  const before = Number.isNaN(t.first) ? t.script : t.first;
  return { ...t, cpu, first: before, paint: t.total - Math.max(before, t.queryEnd), init: t.script - t.run, problems };
}

/**
 * mainThreadCPU sums the thread time of the page's main-thread tasks up to
 * each mark (a task across a mark counts up to it, at most its thread time).
 */
function mainThreadCPU(events) {
  const at = (name) => events.find((e) => e.name === name && e.ph !== 'M');
  const interactive = at('bench:interactive');
  const main = events.find(
    (e) => e.name === 'thread_name' && e.args?.name === 'CrRendererMain' && e.pid === interactive.pid
  );
  const tasks = events.filter(
    (e) => e.pid === main.pid && e.tid === main.tid && e.ph === 'X' && e.name === 'ThreadControllerImpl::RunTask'
  );
  const upTo = (mark) =>
    mark
      ? tasks.filter((e) => e.ts < mark.ts).reduce((a, e) => a + Math.min(e.tdur ?? 0, mark.ts - e.ts) / 1000, 0)
      : NaN;
  return {
    run: upTo(at('flamediff:run')),
    mount: upTo(at('flamediff:mount')),
    panel: upTo(at('bench:panel')),
    interactive: upTo(interactive),
  };
}

/** pages starts bin's serve and writes its report; returns their URLs and a stop. */
async function pages(bin, name, dsn) {
  const report = join(dir, `${name}.html`);
  const pprof = (side) => [1, 2, 3].map((k) => `testdata/pprof/${side}-run${k}.pb.gz`);
  execFileSync(
    bin,
    ['report', '--type', 'diff', '--base', ...pprof('base'), '--head', ...pprof('head'), '-o', report],
    {
      cwd: repo,
    }
  );
  const server = spawn(bin, ['serve', '--dsn', dsn, '--addr', '127.0.0.1:0'], { stdio: ['ignore', 'pipe', 'inherit'] });
  const url = (await firstLine(server)).replace('flamediff serve: ', '');
  return {
    serve: `${url}#app=checkout-service&type=diff&head=1.7.0&base=1.6.0`,
    report: pathToFileURL(report).href,
    stop: () => server.kill('SIGTERM'),
  };
}

const median = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1];
const ms = (v) => (Number.isNaN(v) ? '-' : `${Math.round(v)}`).padStart(8);

let ch;
const sides = [];
const chromiumPath = execFileSync('sh', ['-c', 'command -v chromium'], { encoding: 'utf8' }).trim();
const browser = await chromium.launch({
  executablePath: chromiumPath,
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'],
});
try {
  let addr = process.env.FLAMEDIFF_CLICKHOUSE_ADDR;
  if (!addr) {
    ch = spawn(goBuild('./internal/chtest/cmd/chserver'), [], { stdio: ['ignore', 'pipe', 'inherit'] });
    addr = (await firstLine(ch)).split(' ')[0];
  }
  const dsn = `clickhouse://${addr}/bench_pages_${process.pid}`;
  const bin = goBuild('./cmd/flamediff');
  execFileSync(bin, ['migrate', '--dsn', dsn], { stdio: 'ignore' });
  execFileSync(bin, ['seed', '--dsn', dsn], { stdio: 'ignore' });
  const before = process.env.FLAMEDIFF_BENCH_BEFORE;
  for (const [name, b] of before
    ? [
        ['before', before],
        ['this', bin],
      ]
    : [['this', bin]]) {
    sides.push({ name, urls: await pages(b, name, dsn), runs: { serve: [], report: [] } });
  }
  for (let k = 0; k < ROUNDS; k++) {
    for (const s of sides) {
      for (const which of ['serve', 'report']) {
        s.runs[which].push(await timeLoad(browser, s.urls[which], which === 'serve'));
      }
    }
  }
  console.log(
    `${ROUNDS} loads each, ${chromiumPath}, load average ${execFileSync('cat', ['/proc/loadavg'], { encoding: 'utf8' }).split(' ').slice(0, 3).join(' ')}`
  );
  console.log(
    'page            code    first drawn diff  script    query     draw     main script  init    panel drawn  interactive   (ms; medians, then each interactive)'
  );
  for (const which of ['serve', 'report']) {
    for (const s of sides) {
      const r = s.runs[which];
      const col = (f) => median(r.map(f));
      console.log(
        `${which.padEnd(16)}${s.name.padEnd(8)}${ms(col((x) => x.total))}${' '.repeat(10)}${ms(col((x) => x.first))} ${ms(col((x) => x.query))} ${ms(col((x) => x.paint))}   ${ms(col((x) => x.script))}${ms(col((x) => x.init))}   ${ms(col((x) => x.panel))}     ${ms(col((x) => x.interactive))}      [${r.map((x) => Math.round(x.interactive)).join(', ')}]`
      );
      if (TRACE) {
        const cpu = (k) => ms(col((x) => x.cpu[k]));
        console.log(
          `${''.padEnd(24)}main-thread CPU to: run ${cpu('run')}  mount ${cpu('mount')}  panel ${cpu('panel')}  interactive ${cpu('interactive')}  [${r.map((x) => Math.round(x.cpu.interactive)).join(', ')}]`
        );
      }
      const problems = [...new Set(r.flatMap((x) => x.problems))];
      for (const p of problems) {
        console.log(`    console: ${p}`);
      }
    }
  }
} finally {
  await browser.close();
  for (const s of sides) {
    s.urls.stop();
  }
  ch?.kill('SIGTERM');
  rmSync(dir, { recursive: true, force: true });
}
