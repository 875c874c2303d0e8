import { css } from '@emotion/css';
import React, { useMemo, useState } from 'react';

import { DataFrame, GrafanaTheme2 } from '@grafana/data';
import { Alert, useStyles2, useTheme2 } from '@grafana/ui';

import { selectors } from '../../selectors';
import { strings } from '../../strings';
import { FlameData, SideName, sideOf, toFlameData } from '../model/flameData';
import { search } from '../model/search';
import { Variant, variantOf } from '../model/variants';
import {
  autoDiffScale,
  diffColorIndex,
  diffPaletteCSS,
  packageColorIndex,
  packagePaletteCSS,
  selfColorIndex,
  selfPaletteCSS,
} from '../render/colors';
import { DrawStyle } from '../render/draw';
import { PanelOptions } from '../types';
import { Focus, FlameCanvas } from './FlameCanvas';
import { Legend } from './Legend';
import { Toolbar } from './Toolbar';
import { Tooltip } from './Tooltip';
import { TopTable } from './TopTable';

interface Props {
  frames: Map<Variant, DataFrame>;
  options: PanelOptions;
  width: number;
  height: number;
}

const ROW_HEIGHT = 20;
const TOOLBAR_HEIGHT = 40;
const LEGEND_HEIGHT = 24;
/** Below this width the table goes away: the graph needs the room. */
const TABLE_MIN_PANEL_WIDTH = 700;

function parse(frame: DataFrame | undefined): { data?: FlameData; error?: string } {
  try {
    return frame ? { data: toFlameData(frame) } : {};
  } catch (e) {
    return { error: e instanceof Error ? e.message : String(e) };
  }
}

/** FlameView is the flame graph mode: toolbar, canvas, legend and top table. */
export function FlameView({ frames, options, width, height }: Props) {
  const theme = useTheme2();
  const styles = useStyles2(getStyles);
  const [sideName, setSide] = useState<SideName>(options.defaultSide);
  const [inverted, setInverted] = useState(false);
  const [collapsed, setCollapsed] = useState(false);
  const [text, setText] = useState('');
  const [exact, setExact] = useState(false);
  const [focus, setFocus] = useState<Focus>();
  const [resetSeq, setResetSeq] = useState(0);
  const [hover, setHover] = useState<{ node: number; x: number; y: number }>({ node: -1, x: 0, y: 0 });

  const variant = variantOf(inverted, collapsed);
  const { data, error } = useMemo(() => parse(frames.get(variant) ?? frames.get('normal')), [frames, variant]);
  const scale = useMemo(() => (data ? options.diffScale || autoDiffScale(data) : 1), [data, options.diffScale]);
  const side = data ? sideOf(data, sideName) : undefined;

  const colorIndex = useMemo(() => {
    if (!data) {
      return new Uint8Array(0);
    }
    if (data.head) {
      return diffColorIndex(data, scale);
    }
    return options.singleColorBy === 'self' ? selfColorIndex(data.base) : packageColorIndex(data);
  }, [data, scale, options.singleColorBy]);

  const style = useMemo<DrawStyle>(() => {
    const colors = data?.head
      ? diffPaletteCSS(options.palette)
      : options.singleColorBy === 'self'
        ? selfPaletteCSS()
        : packagePaletteCSS(theme.isLight);
    return {
      colors,
      dim: theme.isDark ? 'rgba(80, 80, 80, 0.55)' : 'rgba(210, 210, 210, 0.8)',
      text: '#222',
      font: `12px ${theme.typography.fontFamilyMonospace}`,
    };
  }, [data, options.palette, options.singleColorBy, theme]);

  const found = useMemo(() => (data ? search(data, { text, exact }) : undefined), [data, text, exact]);

  if (error || !data || !side) {
    return (
      <Alert title={strings.panel.badFrame} severity="error" data-testid={selectors.panel.error}>
        {error}
      </Alert>
    );
  }

  const showTable = options.showTable && width >= TABLE_MIN_PANEL_WIDTH;
  const graphWidth = Math.max(50, showTable ? Math.floor(width * 0.62) : width);
  const graphHeight = Math.max(ROW_HEIGHT, height - TOOLBAR_HEIGHT - (data.head ? LEGEND_HEIGHT : 0));

  const focusLabel = (label: string) => {
    setText(label);
    setExact(true);
    const idx = data.labels.indexOf(label);
    let best = -1;
    for (let i = 0; i < data.n; i++) {
      if (data.labelIdx[i] === idx && (best < 0 || side.total[i] > side.total[best])) {
        best = i;
      }
    }
    if (best >= 0) {
      setFocus((f) => ({ node: best, seq: (f?.seq ?? 0) + 1 }));
    }
  };

  return (
    <div
      className={styles.root}
      data-testid={selectors.panel.root}
      data-variant={frames.has(variant) ? variant : 'normal'}
      data-side={sideName}
    >
      <Toolbar
        isDiff={Boolean(data.head)}
        side={sideName}
        onSide={setSide}
        inverted={inverted}
        canInvert={frames.has(variantOf(!inverted, collapsed))}
        onInverted={setInverted}
        collapsed={collapsed}
        canCollapse={frames.has(variantOf(inverted, !collapsed))}
        onCollapsed={setCollapsed}
        search={text}
        onSearch={(t) => {
          setText(t);
          setExact(false);
        }}
        matches={found?.count}
        onReset={() => {
          setResetSeq((n) => n + 1);
          setText('');
        }}
      />
      <div className={styles.main}>
        <div className={styles.graph} style={{ width: graphWidth }}>
          <FlameCanvas
            data={data}
            side={side}
            colorIndex={colorIndex}
            match={found?.match}
            style={style}
            width={graphWidth}
            height={graphHeight}
            rowHeight={ROW_HEIGHT}
            focus={focus}
            resetSeq={resetSeq}
            onHover={(node, x, y) => setHover((h) => (h.node === node && node < 0 ? h : { node, x, y }))}
          />
          {hover.node >= 0 && <Tooltip data={data} node={hover.node} side={sideName} x={hover.x} y={hover.y} />}
          {data.head && <Legend palette={options.palette} scale={scale} />}
        </div>
        {showTable && (
          <TopTable
            data={data}
            selected={exact ? text : undefined}
            onSelect={focusLabel}
            height={height - TOOLBAR_HEIGHT}
          />
        )}
      </div>
    </div>
  );
}

const getStyles = (theme: GrafanaTheme2) => ({
  root: css({ display: 'flex', flexDirection: 'column', height: '100%', color: theme.colors.text.primary }),
  main: css({ display: 'flex', gap: theme.spacing(1), minHeight: 0 }),
  graph: css({ position: 'relative', flex: 'none' }),
});
