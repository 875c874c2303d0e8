import { css } from '@emotion/css';
import React, { Dispatch } from 'react';

import { GrafanaTheme2 } from '@grafana/data';
import { useStyles2 } from '@grafana/ui';

import { selectors } from '../../selectors';
import { strings } from '../../strings';
import { FlameViewAction } from '../flameViewState';
import { sideOf } from '../model/flameData';
import { ViewSync } from '../split/viewSync';
import { FlameCanvas, FlameCanvasProps } from './FlameCanvas';

/** The gap between the two graphs, and between the graph and the call tree (theme.spacing(1)). */
export const GAP = 8;
/** The side's name above each graph. */
const TITLE_HEIGHT = 20;

interface Props {
  /** What both graphs share with the single graph of the flame view. */
  canvas: Omit<FlameCanvasProps, 'side' | 'width' | 'height' | 'onHover' | 'onZoomed'>;
  /** The width of both graphs and the gap between them. */
  width: number;
  height: number;
  /** The node hovered within the data (outlined in both; -1 for none), the one zoomed onto. */
  hovered: number;
  zoomed: number;
  sync: ViewSync;
  dispatch: Dispatch<FlameViewAction>;
}

/** SplitGraphs draws a diff's base beside its head: one zoom, pan and hover. */
export function SplitGraphs({ canvas, width, height, hovered, zoomed, sync, dispatch }: Props) {
  const styles = useStyles2(getStyles);
  const half = Math.max(50, Math.floor((width - GAP) / 2));
  return (
    <div className={styles.split}>
      {(['base', 'head'] as const).map((name, k) => (
        <div key={name}>
          <div className={styles.title}>{name === 'base' ? strings.panel.splitBase : strings.panel.splitHead}</div>
          <FlameCanvas
            {...canvas}
            side={sideOf(canvas.data, name)}
            width={half}
            height={height - TITLE_HEIGHT}
            // Every move is dispatched: the reducer drops repeated moves outside any node, and a
            // check of the rendered hover here would miss a leave that comes before its render.
            onHover={(node, x, y) => dispatch({ type: 'hover', node, x: x + k * (half + GAP), y: y + TITLE_HEIGHT })}
            // A zoom in either graph is the zoom of both.
            onZoomed={(node) =>
              node !== zoomed && dispatch(node >= 0 ? { type: 'select', node } : { type: 'zoomed', node })
            }
            testId={name === 'base' ? selectors.panel.splitBase : selectors.panel.splitHead}
            label={strings.panel.splitLabel(name === 'base' ? strings.panel.base : strings.panel.head)}
            sync={sync}
            outline={hovered}
          />
        </div>
      ))}
    </div>
  );
}

const getStyles = (theme: GrafanaTheme2) => ({
  split: css({ display: 'flex', gap: GAP }),
  title: css({
    height: TITLE_HEIGHT,
    fontSize: theme.typography.bodySmall.fontSize,
    fontWeight: theme.typography.fontWeightMedium,
  }),
});
