// Bundles a page that runs the panel's code outside Grafana (the browser-test
// harness, the report and the local web UI) into one browser script.
import { build } from 'esbuild';
import { existsSync, readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

const require = createRequire(import.meta.url);
// @grafana/flamegraph 11 nests its own React; one React per page or hooks break.
const react = dirname(require.resolve('react/package.json'));

/**
 * patch is a plugin that rewrites the files matching filter with edits
 * ([from, to] pairs, applied in turn; to may be a function of the file's
 * path), failing the build if one no longer matches: the package has
 * changed and the patch needs a new look.
 */
function patch(name, filter, edits) {
  return {
    name,
    setup(b) {
      b.onLoad({ filter }, async (args) => {
        let src = await readFile(args.path, 'utf8');
        for (const [from, to] of edits) {
          const next = src.replace(from, () => (typeof to === 'function' ? to(args.path) : to));
          if (next === src) {
            throw new Error(`${args.path}: ${name} found no ${from} (has the package changed?)`);
          }
          src = next;
        }
        return { contents: src, loader: 'js', resolveDir: dirname(args.path) };
      });
    },
  };
}

const themeRegistry = /@grafana[\\/]data[\\/]dist[\\/]esm[\\/]themes[\\/]registry\.mjs$/;

/**
 * noExtraThemes: @grafana/data's theme registry validates its twelve extra
 * themes (aubergine, tron, ...) with zod as it loads, a tenth of these pages'
 * start-up; they offer only dark and light, so the registry gets none.
 */
const extraThemes = [/const extraThemes = \{[^}]*\};/, 'const extraThemes = {};'];
const noExtraThemes = patch('no-extra-themes', themeRegistry, [extraThemes]);

/**
 * pageThemes: no extra themes, and the registry's collator, which sorts the
 * themes for Grafana's theme picker, made on first use: making it loads the
 * locale's collation data. (One plugin: esbuild loads a file once.)
 */
const pageThemes = patch('page-themes', themeRegistry, [
  extraThemes,
  [
    'const compareThemeNames = new Intl.Collator().compare;',
    'let collator;\nconst compareThemeNames = (a, b) => (collator ??= new Intl.Collator()).compare(a, b);',
  ],
]);

/**
 * lazySelectors: @grafana/e2e-selectors resolves every selector of Grafana's
 * (about a thousand) for its version as it loads, each version string
 * parsed by semver; the pages' components read a few dozen. Each group is
 * resolved on first read instead.
 */
const lazySelectors = patch('lazy-selectors', /@grafana[\\/]e2e-selectors[\\/]dist[\\/]esm[\\/]resolver\.mjs$/, [
  [
    `    if (isVersionedSelectorGroup(value)) {
      result[key] = resolveSelectorGroup(value, grafanaVersion);
    } else {
      assertIsSemverValid(value, key);
      result[key] = resolveSelector(value, grafanaVersion);
    }`,
    `    Object.defineProperty(result, key, {
      enumerable: true,
      configurable: true,
      get() {
        let resolved;
        if (isVersionedSelectorGroup(value)) {
          resolved = resolveSelectorGroup(value, grafanaVersion);
        } else {
          assertIsSemverValid(value, key);
          resolved = resolveSelector(value, grafanaVersion);
        }
        Object.defineProperty(result, key, { value: resolved, enumerable: true });
        return resolved;
      },
    });`,
  ],
]);

/**
 * noServerRenderer: @grafana/ui's TruncatedText renders its children to
 * static markup, with React's server renderer (a fifth of react-dom), only
 * to strip the tags again for a tooltip; the rendered element's text is the
 * same text.
 */
const noServerRenderer = patch(
  'no-server-renderer',
  /@grafana[\\/]ui[\\/]dist[\\/]esm[\\/]components[\\/]Text[\\/]TruncatedText\.mjs$/,
  [
    ["import ReactDOMServer from 'react-dom/server';\n", ''],
    [
      /const html = ReactDOMServer\.renderToStaticMarkup\([^\n]*\n\s*return html\.replace\([^\n]*/,
      'return internalRef.current?.textContent ?? "";',
    ],
  ]
);

/**
 * zoneDataAsJSON: moment-timezone loads its zone data (700 kB, a third of
 * these pages' script) as a script object; the same data read by
 * JSON.parse from a string skips the script parser's work.
 */
const zoneDataAsJSON = patch('zone-data-as-json', /moment-timezone[\\/]index\.js$/, [
  [
    "moment.tz.load(require('./data/packed/latest.json'));",
    (path) =>
      `moment.tz.load(JSON.parse(${JSON.stringify(readFileSync(join(dirname(path), 'data', 'packed', 'latest.json'), 'utf8'))}));`,
  ],
]);

/**
 * plainUnitNames: @grafana/data builds its table of units on the first
 * formatted value: 355 names through i18next, which on these pages has no
 * translations and returns the English given, and the two local date
 * formats, each an Intl.DateTimeFormat (the locale's data loaded). The
 * names are taken as given; a local date format is made on first use.
 */
const plainUnitNames = patch(
  'plain-unit-names',
  /@grafana[\\/]data[\\/]dist[\\/]esm[\\/]valueFormats[\\/]categories\.mjs$/,
  [
    [
      "import { t } from '@grafana/i18n';",
      'const t = (_key, text) => text;\nconst onFirstUse = (make) => { let fn; return (...args) => (fn ??= make())(...args); };',
    ],
    ['fn: getDateTimeAsLocalFormat()', 'fn: onFirstUse(getDateTimeAsLocalFormat)'],
    ['fn: getDateTimeAsLocalFormatNoDateIfToday()', 'fn: onFirstUse(getDateTimeAsLocalFormatNoDateIfToday)'],
  ]
);

/**
 * noThemeSchemas: zod, for @grafana/data's theme schemas alone, which check
 * theme definitions (the extra themes, left out) and which cost start-up
 * to build. The builders the schemas use return a stand-in; checking with
 * one throws.
 */
const noThemeSchemas = {
  name: 'no-theme-schemas',
  setup(b) {
    b.onResolve({ filter: /^zod$/ }, () => ({ path: 'zod', namespace: 'no-theme-schemas' }));
    b.onLoad({ filter: /.*/, namespace: 'no-theme-schemas' }, () => ({
      contents: `const refuse = () => {
  throw new Error('zod is left out of this page (scripts/bundle.mjs, noThemeSchemas)');
};
const schema = new Proxy(function () {}, {
  get: (_, key) => (/parse/i.test(String(key)) ? refuse : schema),
  apply: () => schema,
});
const build = () => schema;
export { build as array, build as boolean, build as enum, build as int, build as literal, build as number };
export { build as object, build as string, build as union };`,
      loader: 'js',
    }));
  },
};

/**
 * leanLodash: @grafana/* import lodash's functions by name from the whole
 * of lodash, which builds all three hundred as it loads; each comes from
 * its own module instead (the same code), and only those imported are
 * bundled. A name lodash has no module for fails the build.
 */
const lodash = dirname(require.resolve('lodash/package.json'));
const leanLodash = {
  name: 'lean-lodash',
  setup(b) {
    b.onResolve({ filter: /^lodash$/ }, () => ({ path: 'lodash', namespace: 'lean-lodash' }));
    b.onLoad({ filter: /.*/, namespace: 'lean-lodash' }, () => ({
      contents: Object.keys(require('lodash'))
        .filter((name) => existsSync(join(lodash, `${name}.js`)))
        .map((name) => `export { default as ${name} } from './${name}.js';`)
        .join('\n'),
      loader: 'js',
      resolveDir: lodash,
    }));
    // Lodash's modules only define functions: those not imported can be left out.
    b.onResolve({ filter: /^\.\/\w+\.js$/, namespace: 'lean-lodash' }, (args) => ({
      path: join(lodash, args.path),
      sideEffects: false,
    }));
  },
};

/**
 * pageStartup are the patches that take work out of the report's and serve's
 * start-up. They are made for the packages the checkout installs, and fail
 * the build when those change; the browser-test harness runs the panel on
 * the packages as published, as Grafana does (and on the oldest Grafana's
 * in scripts/grafana-versions.sh), so it is built without them.
 */
export const pageStartup = [
  pageThemes,
  lazySelectors,
  noServerRenderer,
  zoneDataAsJSON,
  plainUnitNames,
  noThemeSchemas,
  leanLodash,
];

/**
 * bundle writes entry and everything it imports into outfile (IIFE,
 * minified); extra adds esbuild options, its plugins (pageStartup) in place
 * of noExtraThemes.
 */
export function bundle(entry, outfile, extra = {}) {
  return build({
    entryPoints: [entry],
    outfile,
    bundle: true,
    format: 'iife',
    platform: 'browser',
    target: 'chrome120',
    jsx: 'automatic',
    minify: true,
    sourcemap: false,
    logLevel: 'warning',
    define: { 'process.env.NODE_ENV': '"production"', global: 'window' },
    loader: { '.svg': 'text', '.woff': 'empty', '.woff2': 'empty', '.ttf': 'empty', '.png': 'empty' },
    ...extra,
    plugins: extra.plugins ?? [noExtraThemes],
    alias: { react, 'react/jsx-runtime': join(react, 'jsx-runtime.js'), ...extra.alias },
  });
}
