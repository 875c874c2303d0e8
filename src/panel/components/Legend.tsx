import { css } from '@emotion/css';
import React from 'react';

import { GrafanaTheme2 } from '@grafana/data';
import { useStyles2 } from '@grafana/ui';

import { selectors } from '../../selectors';
import { strings } from '../../strings';
import { formatShare } from '../format';
import { FrameInfo } from '../model/flameData';
import { DIFF_STEPS, NEUTRAL, diffPaletteCSS, Palette } from '../render/colors';

interface Props {
  palette: Palette;
  scale: number;
  info: FrameInfo;
  /** Whether insignificant nodes are drawn grey (statistics present and the toggle on). */
  greyNoise: boolean;
  /** Whether culprit sites are coloured although their node is not significant. */
  culprits?: boolean;
}

const DEFAULT_ALPHA = 0.05;

const s = strings.panel;

/**
 * Legend explains the diff colours: the linear scale, the one-side colours,
 * the grey of noise with its alpha, and the normalisation; without statistics
 * it says why nothing is greyed (the frame's notice).
 */
export function Legend({ palette, scale, info, greyNoise, culprits }: Props) {
  const styles = useStyles2(getStyles);
  const colors = diffPaletteCSS(palette);
  const fast = colors[0];
  const slow = colors[2 * DIFF_STEPS];
  return (
    <div className={styles.legend} data-testid={selectors.panel.legend}>
      <span className={styles.swatch} style={{ background: fast }} />
      <span>{s.legendOnlyBase}</span>
      <span className={styles.end}>
        {formatShare(-scale, true)} {s.legendFaster}
      </span>
      <span
        className={styles.bar}
        style={{ background: `linear-gradient(90deg, ${fast}, ${colors[DIFF_STEPS]}, ${slow})` }}
      />
      <span className={styles.end}>
        {formatShare(scale, true)} {s.legendSlower}
      </span>
      <span className={styles.swatch} style={{ background: slow }} />
      <span>{s.legendOnlyHead}</span>
      {greyNoise && (
        <>
          <span className={styles.swatch} style={{ background: colors[NEUTRAL] }} />
          <span>{s.legendNoise(info.alpha ?? DEFAULT_ALPHA, Boolean(culprits))}</span>
        </>
      )}
      <span className={styles.end}>· {s.legendNormalize[info.normalize]}</span>
      {info.notices.length > 0 && (
        <span className={styles.notice} data-testid={selectors.panel.notice} title={info.notices.join('\n')}>
          · {s.noStats}: {info.notices.join('; ')}
        </span>
      )}
    </div>
  );
}

const getStyles = (theme: GrafanaTheme2) => ({
  legend: css({
    display: 'flex',
    alignItems: 'center',
    gap: theme.spacing(0.75),
    fontSize: theme.typography.bodySmall.fontSize,
    color: theme.colors.text.secondary,
    padding: theme.spacing(0.5, 0),
    flexWrap: 'nowrap',
    overflow: 'hidden',
  }),
  bar: css({ width: 120, height: 10, borderRadius: 2 }),
  swatch: css({ width: 10, height: 10, borderRadius: 2 }),
  end: css({ whiteSpace: 'nowrap' }),
  notice: css({ color: theme.colors.warning.text, overflow: 'hidden', textOverflow: 'ellipsis', whiteSpace: 'nowrap' }),
});
