import { css } from '@emotion/css';
import React from 'react';

import { DataFrame, GrafanaTheme2 } from '@grafana/data';
import { useStyles2 } from '@grafana/ui';

import { selectors } from '../../selectors';
import { strings } from '../../strings';

/** A drill-down: the focus path and its answer (frames), while loading or failed. */
export interface Drill {
  path: string[];
  series?: DataFrame[];
  loading?: boolean;
  error?: string;
}

interface Props {
  drill: Drill;
  /** Goes to a prefix of the path; [] returns to the panel's own frames. */
  onPath: (path: string[]) => void;
  /** The navigation's name for screen readers (default: the drill-down's). */
  label?: string;
}

const s = strings.panel;

/** Breadcrumb shows the focused path; each step is a button back to that level. */
export function Breadcrumb({ drill, onPath, label = s.fullDetail }: Props) {
  const styles = useStyles2(getStyles);
  const { path } = drill;
  return (
    <nav className={styles.bar} aria-label={label} data-testid={selectors.panel.breadcrumb}>
      <button className={styles.step} onClick={() => onPath([])}>
        {s.allNodes}
      </button>
      {path.map((label, k) => (
        <React.Fragment key={k}>
          <span aria-hidden>›</span>
          {k < path.length - 1 ? (
            <button className={styles.step} onClick={() => onPath(path.slice(0, k + 1))} title={label}>
              {label}
            </button>
          ) : (
            <span className={styles.current} aria-current="location" title={label}>
              {label}
            </span>
          )}
        </React.Fragment>
      ))}
      {drill.loading && <span className={styles.note}>{s.loading}</span>}
      {drill.error && (
        <span className={styles.error} role="alert">
          {s.queryFailed} {drill.error}
        </span>
      )}
    </nav>
  );
}

const getStyles = (theme: GrafanaTheme2) => ({
  bar: css({
    display: 'flex',
    alignItems: 'center',
    gap: theme.spacing(0.5),
    height: 28,
    overflow: 'hidden',
    whiteSpace: 'nowrap',
    fontSize: theme.typography.bodySmall.fontSize,
  }),
  step: css({
    background: 'none',
    border: 'none',
    padding: 0,
    color: theme.colors.text.link,
    cursor: 'pointer',
    maxWidth: 240,
    overflow: 'hidden',
    textOverflow: 'ellipsis',
  }),
  current: css({
    fontWeight: theme.typography.fontWeightMedium,
    maxWidth: 320,
    overflow: 'hidden',
    textOverflow: 'ellipsis',
  }),
  note: css({ color: theme.colors.text.secondary }),
  error: css({ color: theme.colors.error.text }),
});
