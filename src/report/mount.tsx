import { injectGlobal } from '@emotion/css';
import React from 'react';
import { createRoot } from 'react-dom/client';

import { ThemeContext, createTheme } from '@grafana/data';

/**
 * mount renders a page into #root in the theme matching the browser's
 * colour scheme. Of Grafana's global styles it takes the box model and the
 * body font: the rest (GlobalStyles) loads web fonts from Grafana's server.
 */
export function mount(page: React.ReactElement) {
  const mode = window.matchMedia?.('(prefers-color-scheme: light)').matches ? 'light' : 'dark';
  const theme = createTheme({ colors: { mode } });
  injectGlobal({
    '*, *::before, *::after': { boxSizing: 'border-box' },
    body: {
      margin: 0,
      background: theme.colors.background.primary,
      color: theme.colors.text.primary,
      fontFamily: theme.typography.fontFamily,
    },
  });
  createRoot(document.getElementById('root')!).render(
    <ThemeContext.Provider value={theme}>{page}</ThemeContext.Provider>
  );
}
