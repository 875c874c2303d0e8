import { css } from '@emotion/css';
import React from 'react';

import { useStyles2 } from '@grafana/ui';

import { selectors } from '../../selectors';
import { Culprit } from '../model/culprits';
import { FlameData, SideName } from '../model/flameData';
import { Palette } from '../render/colors';
import { srOnly } from './srOnly';
import { Tooltip, relativeChange } from './Tooltip';

interface Props {
  data: FlameData;
  /** The node hovered (or selected with the keyboard), -1 for none. */
  node: number;
  side: SideName;
  x: number;
  y: number;
  palette: Palette;
  culprit?: Culprit;
}

/** HoverInfo shows the hovered node: its tooltip, and its function and change to a screen reader. */
export function HoverInfo({ data, node, culprit, ...p }: Props) {
  const styles = useStyles2(getStyles);
  return (
    <>
      {node >= 0 && <Tooltip data={data} node={node} culprit={culprit} {...p} />}
      <div className={styles.srOnly} aria-live="polite" data-testid={selectors.panel.live}>
        {node >= 0 && hoverText(data, node)}
      </div>
    </>
  );
}

/** hoverText is what a screen reader hears of a node: its function, and its change in a diff. */
function hoverText(data: FlameData, node: number): string {
  const label = data.labels[data.labelIdx[node]];
  return data.head ? `${label}, ${relativeChange(data.head.total[node], data.base.total[node])}` : label;
}

const getStyles = () => ({ srOnly: css(srOnly) });
