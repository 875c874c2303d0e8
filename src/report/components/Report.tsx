import { css } from '@emotion/css';
import React, { useEffect, useMemo, useRef, useState } from 'react';

import { DataFrame, GrafanaTheme2 } from '@grafana/data';
import { useStyles2 } from '@grafana/ui';

import { FlamediffPanel } from '../../panel/components/FlamediffPanel';
import { isFlameFrame } from '../../panel/model/flameData';
import { frameVariant } from '../../panel/model/variants';
import { defaultPanelOptions } from '../../panel/types';
import { selectors } from '../../selectors';
import { panelProps } from '../panelProps';
import { Verdict } from './Verdict';
import { verdictOf } from '../verdict';

/**
 * Report shows frames as the Grafana panel does, filling the space it is
 * given, with the verdict of a diff above it.
 */
export function Report({ series }: { series: DataFrame[] }) {
  const styles = useStyles2(getStyles);
  const verdict = useMemo(() => {
    const normal = series.find((f) => isFlameFrame(f) && frameVariant(f) === 'normal');
    return normal ? verdictOf(normal) : undefined;
  }, [series]);
  const box = useRef<HTMLDivElement>(null);
  const [size, setSize] = useState({ width: 0, height: 0 });
  useEffect(() => {
    const el = box.current!;
    const observer = new ResizeObserver(() => setSize({ width: el.clientWidth, height: el.clientHeight }));
    observer.observe(el);
    return () => observer.disconnect();
  }, []);
  return (
    <div className={styles.column}>
      {verdict && <Verdict verdict={verdict} />}
      <div ref={box} className={styles.panel}>
        {size.width > 0 && <FlamediffPanel {...panelProps(series, defaultPanelOptions, size.width, size.height)} />}
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
});
