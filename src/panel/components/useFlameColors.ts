import { useMemo } from 'react';

import { useTheme2 } from '@grafana/ui';

import { FlameData } from '../model/flameData';
import {
  autoDiffScale,
  diffColorIndex,
  NodeColors,
  diffPaletteCSS,
  packageColorIndex,
  packagePaletteCSS,
  selfColorIndex,
  selfPaletteCSS,
} from '../render/colors';
import { DrawStyle } from '../render/draw';
import { PanelOptions } from '../types';

/** The colours of no tree: nothing is drawn. */
const noColors: NodeColors = { keyOf: () => 0 };

/**
 * useFlameColors colours a tree as the panel options say: the diff scale
 * (noise grey when significantOnly and the frame has statistics), or the
 * package or self colours of a single flame graph; culprits are the sites
 * of the diff's culprits, coloured even when noise is grey. The graph and
 * the sandwich's two trees share it, so that both read the same.
 */
export function useFlameColors(
  data: FlameData | undefined,
  options: PanelOptions,
  significantOnly: boolean,
  culprits?: ReadonlyMap<number, unknown>
) {
  const theme = useTheme2();
  const greyNoise = significantOnly && Boolean(data?.stats);
  const scale = useMemo(
    () => (data ? options.diffScale || autoDiffScale(data, greyNoise, culprits) : 1),
    [data, options.diffScale, greyNoise, culprits]
  );
  const colorIndex = useMemo(() => {
    if (!data) {
      return noColors;
    }
    if (data.head) {
      return diffColorIndex(data, scale, significantOnly, culprits);
    }
    return options.singleColorBy === 'self' ? selfColorIndex(data.base) : packageColorIndex(data);
  }, [data, scale, significantOnly, options.singleColorBy, culprits]);

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
      outline: theme.isDark ? '#ffffff' : '#000000',
    };
  }, [data, options.palette, options.singleColorBy, theme]);
  return { greyNoise, scale, colorIndex, style };
}
