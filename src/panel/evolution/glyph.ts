import { diffRGB, Palette } from '../render/colors';
import { Cell, Component } from './model';

/** Modified-method counts at which the top box grows: 0, 1-4, 5-9, 10 and more. */
export const MODIFIED_STEPS = [1, 5, 10];

/** Top box widths, as a fraction of the glyph width, for each size class. */
export const TOP_WIDTHS = [0.15, 0.4, 0.7, 1];

/** modifiedClass is the size class (0-3) of a modified-method count. */
export function modifiedClass(modified: number): number {
  return MODIFIED_STEPS.filter((s) => modified >= s).length;
}

/** Pixel geometry of one glyph inside its cell, relative to the glyph's top-left. */
export interface GlyphBoxes {
  top: { x: number; width: number; height: number };
  bottom: { x: number; y: number; width: number; height: number };
}

/**
 * glyphBoxes places the two boxes of a glyph of size width x height: the top
 * box (a quarter of the height) centred, its width by the modified class; the
 * bottom box (the rest) full width, bottom-aligned, its height the cell's time
 * relative to the row's largest time (at least 1px so a present component
 * is never invisible).
 */
export function glyphBoxes(cell: Cell, row: Component, width: number, height: number): GlyphBoxes {
  const topH = Math.max(2, Math.round(height / 4));
  const tw = Math.max(1, Math.round(width * TOP_WIDTHS[modifiedClass(cell.modified)]));
  const room = height - topH - 1;
  const rel = row.maxTime > 0 ? Math.max(0, cell.time) / row.maxTime : 0;
  const bh = Math.max(1, Math.round(room * rel));
  return {
    top: { x: Math.round((width - tw) / 2), width: tw, height: topH },
    bottom: { x: 0, y: height - bh, width, height: bh },
  };
}

/** Change at which the colour saturates when the panel's diffScale is 0. */
export const DEFAULT_CHANGE_SCALE = 0.25;

/**
 * changeColor maps a relative change onto the divergent scale: faster green
 * (blue for colorBlind), grey unchanged, slower red (orange), saturating at ±scale.
 * null (nothing to compare with) gives undefined: the caller draws the
 * box neutral.
 */
export function changeColor(change: number | null, scale: number, palette: Palette): string | undefined {
  if (change === null) {
    return undefined;
  }
  const [r, g, b] = diffRGB(scale > 0 ? change / scale : 0, palette);
  return `rgb(${r}, ${g}, ${b})`;
}

/**
 * cellColor is a cell's change colour; with greyNoise, a change the test
 * across runs does not call significant (or could not test) takes the
 * neutral grey, as noise does in the flame graph.
 */
export function cellColor(cell: Cell, scale: number, palette: Palette, greyNoise: boolean): string | undefined {
  return changeColor(greyNoise && cell.change !== null && cell.significant !== true ? 0 : cell.change, scale, palette);
}
