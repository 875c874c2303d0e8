// The first-paint script of the report's and serve's pages (dist/first.js.gz):
// a few dozen kilobytes that draw the diff with the panel's own decoding,
// colours and renderer before the page's main script, a megabyte and more
// of React and Grafana's components, is evaluated (a second and more on a
// loaded machine). The drawing covers the page until the panel's canvas
// has drawn; it takes no input (the main script is loading meanwhile). It
// draws only the default view: a fragment naming another one (a zoom, a
// side, a search...) waits for the panel. serve's page asks for its answer
// at once (the query in its URL, else what it opens on) and hands it over.
// The page's loader (pkg/web) evaluates the main script once
// flamediffFirstReady settles and the drawing is painted. Anything
// unexpected means no drawing, never an error: the panel shows the same
// data in a moment.
import type { DataFrame, DataFrameJSON, Field } from '@grafana/data';

import { culpritSites, culpritsFrameOf, parseCulprits } from '../panel/model/culprits';
import { infoOf, isFlameFrame, sideOf, toFlameData } from '../panel/model/flameData';
import { flameFramesByVariant } from '../panel/model/variants';
import { isMatrixFrame } from '../panel/evolution/model';
import {
  Palette,
  autoDiffScale,
  diffColorIndex,
  diffPaletteCSS,
  packageColorIndex,
  packagePaletteCSS,
} from '../panel/render/colors';
import { draw, newScratch } from '../panel/render/draw';
import { fullView } from '../panel/render/layout';
import { defaultPanelOptions } from '../panel/types';
import { selectors } from '../selectors';
import { strings } from '../strings';
import { FlamediffQuery } from '../datasource/types';
import { names } from '../datasource/resources';
import { early, handoff } from './handoff';
import { BuildInfo, openingQuery } from './presets';
import { decodeState } from './urlState';

/** How long the loader waits for serve's answer before it runs the main script anyway. */
const WAIT_MS = 1000;
/** The longest the drawing covers the page (the main script takes seconds on a loaded machine). */
const UNCOVER_MS = 20_000;
const ROW_HEIGHT = 20;

/** frameOf reads a DataFrameJSON without changing it (the main script decodes the same arrays). */
function frameOf(json: DataFrameJSON): DataFrame {
  const { schema, data } = json;
  const fields = (schema?.fields ?? []).map((f, i): Field => {
    let values: unknown[] = data?.values[i] ?? [];
    let type = f.type;
    let config = f.config ?? {};
    const entities = data?.entities?.[i];
    if (entities) {
      values = values.slice();
      const repl = { NaN: NaN, Inf: Infinity, NegInf: -Infinity, Undef: undefined };
      for (const [k, idx] of Object.entries(entities)) {
        idx?.forEach((j: number) => (values[j] = repl[k as keyof typeof repl]));
      }
    }
    const enums = data?.enums?.[i];
    if (enums) {
      // Indexes into a text table: toFlameData reads them as an enum field.
      type = 'enum' as Field['type'];
      config = { ...config, type: { enum: { text: enums } } };
    }
    return { name: f.name, type: type!, config, values } as Field;
  });
  return { ...schema, fields, length: Math.max(0, ...fields.map((f) => f.values.length)) } as DataFrame;
}

/** paint draws the diff's default view over the page; false when it cannot. */
function paint(title: string, frames: DataFrameJSON[], palette: Palette): boolean {
  const series = frames.map(frameOf);
  if (series.some(isMatrixFrame)) {
    return false;
  }
  const first = series.find(isFlameFrame);
  if (!first) {
    return false;
  }
  const own = infoOf(first).normalize;
  const frame = flameFramesByVariant(series.filter((f) => isFlameFrame(f) && infoOf(f).normalize === own)).get(
    'normal'
  );
  if (!frame) {
    return false;
  }
  const data = toFlameData(frame);
  const culprits = culpritsFrameOf(frame, [series]);
  const sites = culpritSites(data, culprits && parseCulprits(culprits));
  const light = window.matchMedia?.('(prefers-color-scheme: light)').matches;
  // The panel's defaults: the head side, noise grey, the page's palette (useFlameColors).
  const greyNoise = Boolean(data.stats);
  const colorIndex = data.head
    ? diffColorIndex(data, autoDiffScale(data, greyNoise, sites), true, sites)
    : packageColorIndex(data);
  const colors = data.head ? diffPaletteCSS(palette) : packagePaletteCSS(Boolean(light));

  // Grafana's theme colours and type (the page's header, as Page draws it).
  const cover = document.createElement('div');
  cover.id = 'flamediff-first';
  cover.style.cssText =
    `position:fixed;inset:0;z-index:1000;display:flex;flex-direction:column;margin:0;` +
    `font-family:Inter,Helvetica,Arial,sans-serif;font-size:14px;` +
    (light ? 'background:#ffffff;color:rgba(36,41,46,1)' : 'background:#111217;color:rgb(204,204,220)');
  const header = document.createElement('h1');
  header.textContent = title;
  header.style.cssText = `font-size:18px;font-weight:400;margin:0;padding:8px 16px;border-bottom:1px solid ${
    light ? 'rgba(36,41,46,0.12)' : 'rgba(204,204,220,0.12)'
  }`;
  const canvas = document.createElement('canvas');
  canvas.dataset.testid = selectors.report.firstPaint;
  canvas.setAttribute('aria-label', strings.report.firstPaint);
  canvas.style.cssText = 'margin:8px;flex:1;min-height:0;display:block';
  cover.append(header, canvas);
  document.body.append(cover);
  // Set up first: a drawing that fails midway goes away too.
  uncoverOnPanel(cover);
  const width = canvas.clientWidth;
  const height = canvas.clientHeight;
  const ctx = canvas.getContext('2d');
  if (!ctx || width <= 0 || height <= 0) {
    cover.remove();
    return false;
  }
  const dpr = window.devicePixelRatio || 1;
  canvas.width = Math.round(width * dpr);
  canvas.height = Math.round(height * dpr);
  ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
  const side = sideOf(data, defaultPanelOptions.defaultSide);
  const drawn = draw(
    ctx,
    { data, side, view: fullView(side), geo: { width, height, rowHeight: ROW_HEIGHT }, colorIndex },
    {
      colors,
      dim: light ? 'rgba(210, 210, 210, 0.8)' : 'rgba(80, 80, 80, 0.55)',
      text: '#222',
      font: "12px 'Roboto Mono', monospace",
      outline: 'transparent',
    },
    newScratch(data.n)
  );
  canvas.dataset.drawn = String(drawn);
  return true;
}

/**
 * uncoverOnPanel removes the drawing once the panel's canvas has drawn (or
 * the page shows an error), at the latest after UNCOVER_MS: a page the panel
 * is missing from is better than one that cannot be used.
 */
function uncoverOnPanel(cover: HTMLElement) {
  const root = document.getElementById('root')!;
  const done = () => {
    observer.disconnect();
    clearTimeout(timer);
    cover.remove();
  };
  const timer = setTimeout(done, UNCOVER_MS);
  const observer = new MutationObserver(() => {
    if (root.querySelector('canvas[data-drawn], [role="alert"]')) {
      done();
    }
  });
  observer.observe(root, { subtree: true, childList: true, attributes: true, attributeFilter: ['data-drawn'] });
}

/** start draws the page's data: the report's inline data, or serve's query from the fragment. */
function start(): Promise<unknown> {
  const state = decodeState(window.location.hash);
  const palette = state.palette ?? 'default';
  if (Object.keys(state.view).length > 0) {
    return Promise.resolve(); // not the default view
  }
  const inline = document.getElementById('flamediff-data');
  if (inline) {
    const data = JSON.parse(inline.textContent!) as { title: string; frames: DataFrameJSON[] };
    handoff().reportData = data;
    paint(data.title, data.frames, palette);
    return Promise.resolve();
  }
  const show = (q: FlamediffQuery) =>
    early<DataFrameJSON[]>('api/query', q).then((frames) => paint(strings.report.serveTitle, frames, palette));
  return state.query ? show(state.query) : opening().then((q) => q && show(q));
}

/** opening asks what serve's page opens on without a query in its URL (the first app's newest builds), as it will. */
async function opening(): Promise<FlamediffQuery | undefined> {
  const apps = names(await early('api/resources/apps?'));
  if (!apps[0]) {
    return undefined;
  }
  const builds = await early<BuildInfo[]>(`api/resources/builds?${new URLSearchParams({ app: apps[0] })}`);
  return openingQuery(apps[0], builds);
}

// The first-paint script has loaded and run this far (e2e/bench/pages.mjs reads it).
performance.mark('flamediff:first');
/** ready settles when the drawing is done, or given up. */
let ready: Promise<unknown>;
try {
  ready = start().catch(() => undefined);
} catch {
  ready = Promise.resolve();
}
(window as unknown as { flamediffFirstReady?: Promise<unknown> }).flamediffFirstReady = Promise.race([
  ready,
  new Promise((ok) => setTimeout(ok, WAIT_MS)),
]);
