import { css } from '@emotion/css';
import React, { useLayoutEffect, useMemo, useRef, useState } from 'react';

import { DataFrame, GrafanaTheme2 } from '@grafana/data';
import { InlineSwitch, useStyles2 } from '@grafana/ui';

import { FlamediffPanel } from '../../panel/components/FlamediffPanel';
import { Palette } from '../../panel/render/colors';
import { defaultPanelOptions } from '../../panel/types';
import { ViewContext, ViewHost } from '../../panel/viewState';
import { selectors } from '../../selectors';
import { strings } from '../../strings';
import { panelProps } from '../panelProps';

interface Props {
  series: DataFrame[];
  /** Keeps the panel's view (in the page's URL). */
  host: ViewHost;
  palette: Palette;
  onPalette: (p: Palette) => void;
}

/**
 * Report shows frames as the Grafana panel does (a diff with its verdict and
 * culprits), filling the space it is given, with the palette switch.
 */
export function Report({ series, host, palette, onPalette }: Props) {
  const options = useMemo(() => ({ ...defaultPanelOptions, palette }), [palette]);
  const styles = useStyles2(getStyles);
  const box = useRef<HTMLDivElement>(null);
  const [size, setSize] = useState({ width: 0, height: 0 });
  // Measured before the first paint, so that the panel is in the page's first frame rather than two later.
  useLayoutEffect(() => {
    const el = box.current!;
    const measure = () => setSize({ width: el.clientWidth, height: el.clientHeight });
    measure();
    const observer = new ResizeObserver(measure);
    observer.observe(el);
    return () => observer.disconnect();
  }, []);
  return (
    <div className={styles.column}>
      <div className={styles.options} data-testid={selectors.report.palette} title={strings.report.paletteHelp}>
        <InlineSwitch
          label={strings.report.colorBlind}
          showLabel
          value={palette === 'colorBlind'}
          onChange={(e) => onPalette(e.currentTarget.checked ? 'colorBlind' : 'default')}
        />
      </div>
      <div ref={box} className={styles.panel}>
        {size.width > 0 && (
          <ViewContext.Provider value={host}>
            <FlamediffPanel {...panelProps(series, options, size.width, size.height)} />
          </ViewContext.Provider>
        )}
      </div>
    </div>
  );
}

/** Page is a full-window page: a header, then the body filling the rest. */
export function Page({
  title,
  header,
  children,
}: {
  title: string;
  header?: React.ReactNode;
  children: React.ReactNode;
}) {
  const styles = useStyles2(getStyles);
  return (
    <div className={styles.page} data-testid={selectors.report.root}>
      <div className={styles.header}>
        <h1 className={styles.title} data-testid={selectors.report.title}>
          {title}
        </h1>
        {header}
      </div>
      <div className={styles.body}>{children}</div>
    </div>
  );
}

const getStyles = (theme: GrafanaTheme2) => ({
  page: css({
    display: 'flex',
    flexDirection: 'column',
    height: '100vh',
    background: theme.colors.background.primary,
    color: theme.colors.text.primary,
    fontFamily: theme.typography.fontFamily,
  }),
  header: css({
    display: 'flex',
    flexWrap: 'wrap',
    alignItems: 'center',
    gap: theme.spacing(2),
    padding: theme.spacing(1, 2),
    borderBottom: `1px solid ${theme.colors.border.weak}`,
  }),
  title: css({ fontSize: theme.typography.h4.fontSize, margin: 0 }),
  body: css({ flex: 1, minHeight: 0, display: 'flex', flexDirection: 'column' }),
  column: css({ flex: 1, minHeight: 0, display: 'flex', flexDirection: 'column' }),
  panel: css({ flex: 1, minHeight: 0, margin: theme.spacing(1) }),
  options: css({ display: 'flex', justifyContent: 'flex-end', padding: theme.spacing(0.5, 1, 0) }),
});
