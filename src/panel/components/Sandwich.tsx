import { css } from '@emotion/css';
import React, { useContext, useMemo, useState } from 'react';

import { DataFrame, GrafanaTheme2 } from '@grafana/data';
import { Alert, useStyles2 } from '@grafana/ui';

import { selectors } from '../../selectors';
import { strings } from '../../strings';
import { Sandwich } from '../model/around';
import { FlameData, SideName, sideOf, toFlameData } from '../model/flameData';
import { nodeAtPath } from '../model/focus';
import { flameFramesByVariant } from '../model/variants';
import { autoDiffScale } from '../render/colors';
import { PanelOptions } from '../types';
import { ViewContext } from '../viewState';
import { Breadcrumb } from './Breadcrumb';
import { Focus, FlameCanvas } from './FlameCanvas';
import { Legend } from './Legend';
import { srOnly } from './srOnly';
import { Tooltip, relativeChange } from './Tooltip';
import { useFlameColors } from './useFlameColors';

interface Props {
  sandwich: Sandwich;
  options: PanelOptions;
  width: number;
  height: number;
  /** Back to the whole graph (the breadcrumb's first step). */
  onBack: () => void;
}

const ROW_HEIGHT = 20;
const BREADCRUMB_HEIGHT = 28;
const LEGEND_HEIGHT = 24;
const s = strings.panel;

/** normalTree parses a part's normal tree (the sandwich is drawn without the variant toggles). */
function normalTree(frames: DataFrame[]): FlameData {
  const byVariant = flameFramesByVariant(frames);
  return toFlameData(byVariant.get('normal') ?? frames[0]);
}

/**
 * SandwichView draws a function's callers (flipped: the function at the
 * bottom, its callers above) over its callees (the function on top, what it
 * calls below), each zoomed onto the function, coloured on one scale as the
 * graph is; the breadcrumb returns to the whole graph.
 */
export function SandwichView({ sandwich, options, width, height, onBack }: Props) {
  const host = useContext(ViewContext);
  const side: SideName = host?.view.side ?? options.defaultSide;
  const significantOnly = host?.view.significantOnly ?? true;
  const parsed = useMemo(() => {
    try {
      return { callers: normalTree(sandwich.callers), callees: normalTree(sandwich.callees) };
    } catch (e) {
      return { error: e instanceof Error ? e.message : String(e) };
    }
  }, [sandwich]);
  const scale = useMemo(() => {
    if (options.diffScale || 'error' in parsed) {
      return options.diffScale;
    }
    const grey = significantOnly && Boolean(parsed.callers.stats);
    return Math.max(autoDiffScale(parsed.callers, grey), autoDiffScale(parsed.callees, grey));
  }, [parsed, options.diffScale, significantOnly]);
  const shared = useMemo(() => ({ ...options, diffScale: scale }), [options, scale]);

  if ('error' in parsed) {
    return (
      <Alert title={s.badFrame} severity="error" data-testid={selectors.panel.error}>
        {parsed.error}
      </Alert>
    );
  }
  const isDiff = Boolean(parsed.callees.head);
  const partHeight = Math.max(
    ROW_HEIGHT * 2,
    Math.floor((height - BREADCRUMB_HEIGHT - (isDiff ? LEGEND_HEIGHT : 0)) / 2)
  );
  const part = (which: 'callers' | 'callees') => (
    <SandwichPart
      data={parsed[which]}
      fn={sandwich.fn}
      flipped={which === 'callers'}
      testId={selectors.panel[which]}
      label={s.around[which](sandwich.fn)}
      side={side}
      significantOnly={significantOnly}
      options={shared}
      width={width}
      height={partHeight}
    />
  );
  return (
    <div data-testid={selectors.panel.sandwich} data-function={sandwich.fn}>
      <Breadcrumb drill={{ path: [s.around.sandwich(sandwich.fn)] }} onPath={onBack} label={s.around.sandwichHelp} />
      {part('callers')}
      {part('callees')}
      {isDiff && (
        <Legend
          palette={options.palette}
          scale={scale}
          info={parsed.callees.info}
          greyNoise={significantOnly && Boolean(parsed.callees.stats)}
        />
      )}
    </div>
  );
}

/** SandwichPart is one of the two trees, zoomed onto the function, with its tooltip. */
function SandwichPart(p: {
  data: FlameData;
  fn: string;
  flipped: boolean;
  testId: string;
  label: string;
  side: SideName;
  significantOnly: boolean;
  options: PanelOptions;
  width: number;
  height: number;
}) {
  const styles = useStyles2(getStyles);
  const { data } = p;
  const side = sideOf(data, p.side);
  const { colorIndex, style } = useFlameColors(data, p.options, p.significantOnly);
  const [hover, setHover] = useState({ node: -1, x: 0, y: 0 });
  // Start on the function, the root's row scrolled away (it holds every
  // stack's totals): the two trees meet at the function.
  const focus = useMemo<Focus | undefined>(() => {
    const node = nodeAtPath(data, [p.fn]);
    return node > 0 ? { node, seq: 1, scrollY: ROW_HEIGHT } : undefined;
  }, [data, p.fn]);
  const hovered = hover.node >= 0 && hover.node < data.n ? hover.node : -1;
  return (
    <div className={styles.part}>
      <FlameCanvas
        data={data}
        side={side}
        colorIndex={colorIndex}
        style={style}
        width={p.width}
        height={p.height}
        rowHeight={ROW_HEIGHT}
        focus={focus}
        resetSeq={0}
        flipped={p.flipped}
        testId={p.testId}
        label={p.label}
        onHover={(node, x, y) => setHover((h) => (h.node === node && node < 0 ? h : { node, x, y }))}
        onZoomed={() => undefined}
      />
      {hovered >= 0 && (
        <Tooltip data={data} node={hovered} side={p.side} x={hover.x} y={hover.y} palette={p.options.palette} />
      )}
      <div className={styles.srOnly} aria-live="polite" data-testid={`${p.testId}-live`}>
        {hovered >= 0 &&
          `${data.labels[data.labelIdx[hovered]]}${
            data.head ? `, ${relativeChange(data.head.total[hovered], data.base.total[hovered])}` : ''
          }`}
      </div>
    </div>
  );
}

const getStyles = (theme: GrafanaTheme2) => ({
  part: css({ position: 'relative' }),
  srOnly: css(srOnly),
});
