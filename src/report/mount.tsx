import { injectGlobal } from '@emotion/css';
import React from 'react';
import { createRoot } from 'react-dom/client';

import { GrafanaTheme2, ThemeContext, createTheme } from '@grafana/data';

/**
 * grafanaElements is the part of Grafana's global styles (GlobalStyles)
 * that its components rely on: the box model, the type scale of html and
 * body (an InlineSwitch's label and an Input's text take their size from
 * it) and inline-block labels (a Switch draws its track in one). The rest
 * loads web fonts from Grafana's server. The report, serve and the browser
 * tests' harness all take these.
 */
export function grafanaElements(theme: GrafanaTheme2) {
  return {
    '*, *::before, *::after': { boxSizing: 'border-box' as const },
    html: {
      fontSize: `${theme.typography.htmlFontSize}px`,
      lineHeight: theme.typography.body.lineHeight,
      fontFamily: theme.typography.fontFamily,
    },
    body: { margin: 0, ...theme.typography.body },
    label: { display: 'inline-block' },
  };
}

/**
 * mount renders a page into #root in the theme matching the browser's
 * colour scheme, with Grafana's element styles (grafanaElements).
 */
export function mount(page: React.ReactElement) {
  // The page's script has loaded and run this far (e2e/bench/pages.mjs reads it).
  performance.mark('flamediff:mount');
  const mode = window.matchMedia?.('(prefers-color-scheme: light)').matches ? 'light' : 'dark';
  const theme = createTheme({ colors: { mode } });
  injectGlobal(grafanaElements(theme));
  injectGlobal({ body: { background: theme.colors.background.primary, color: theme.colors.text.primary } });
  createRoot(document.getElementById('root')!).render(
    <ThemeContext.Provider value={theme}>{page}</ThemeContext.Provider>
  );
}
