import { cellColor, changeColor, glyphBoxes, modifiedClass } from './glyph';
import { Cell, Component } from './model';

const row = { maxTime: 200 } as Component;
const cell = (time: number, modified: number): Cell => ({
  time,
  modified,
  share: 0,
  change: 0,
  added: 0,
  modifiedMethods: [],
  changePoints: [],
  addedMethods: [],
  pValue: null,
  qValue: null,
  significant: null,
});

describe('glyph sizes', () => {
  it('puts modified counts into four classes', () => {
    expect([0, 1, 4, 5, 9, 10, 300].map(modifiedClass)).toEqual([0, 1, 1, 2, 2, 3, 3]);
  });

  it('widens the top box with the modified class', () => {
    const widths = [0, 3, 7, 12].map((m) => glyphBoxes(cell(100, m), row, 40, 16).top.width);
    for (let i = 1; i < widths.length; i++) {
      expect(widths[i]).toBeGreaterThan(widths[i - 1]);
    }
    expect(widths[3]).toBe(40);
  });

  it('scales the bottom box by time relative to the row maximum, bottom-aligned', () => {
    const full = glyphBoxes(cell(200, 0), row, 40, 16);
    const half = glyphBoxes(cell(100, 0), row, 40, 16);
    expect(full.bottom.y + full.bottom.height).toBe(16);
    expect(half.bottom.y + half.bottom.height).toBe(16);
    // Whole pixels: half the time is half the height give or take rounding.
    expect(Math.abs(half.bottom.height - full.bottom.height / 2)).toBeLessThanOrEqual(0.5);
    expect(full.bottom.y).toBeGreaterThan(full.top.height);
    expect(glyphBoxes(cell(0, 0), row, 40, 16).bottom.height).toBe(1);
  });
});

describe('changeColor', () => {
  const rgb = (c?: string) => c!.match(/\d+/g)!.map(Number);

  it('is red for slower, green for faster, grey for no change', () => {
    const [r1, g1] = rgb(changeColor(0.5, 0.25, 'default'));
    expect(r1).toBeGreaterThan(150);
    expect(g1).toBeLessThan(60);
    const [r2, g2] = rgb(changeColor(-0.5, 0.25, 'default'));
    expect(g2).toBeGreaterThan(120);
    expect(r2).toBeLessThan(60);
    const [r3, g3, b3] = rgb(changeColor(0, 0.25, 'default'));
    expect(Math.max(r3, g3, b3) - Math.min(r3, g3, b3)).toBeLessThan(10);
  });

  it('uses blue for faster with the colour-blind palette', () => {
    const [r, g, b] = rgb(changeColor(-1, 0.25, 'colorBlind'));
    expect(b).toBeGreaterThan(200);
    expect(r).toBeLessThan(60);
    expect(g).toBeLessThan(b);
  });

  it('greys a change the test across runs does not call significant', () => {
    const slower = { ...cell(100, 0), change: 0.2 };
    const grey = changeColor(0, 0.25, 'default');
    expect(cellColor({ ...slower, significant: false }, 0.25, 'default', true)).toBe(grey);
    expect(cellColor({ ...slower, significant: null }, 0.25, 'default', true)).toBe(grey);
    expect(cellColor({ ...slower, significant: true }, 0.25, 'default', true)).toBe(changeColor(0.2, 0.25, 'default'));
    // The toggle off: every change keeps its colour; no change stays undecided.
    expect(cellColor({ ...slower, significant: false }, 0.25, 'default', false)).toBe(
      changeColor(0.2, 0.25, 'default')
    );
    expect(cellColor({ ...slower, change: null }, 0.25, 'default', true)).toBeUndefined();
  });

  it('saturates at the scale and leaves null undecided', () => {
    expect(changeColor(0.25, 0.25, 'default')).toBe(changeColor(3, 0.25, 'default'));
    expect(changeColor(0.1, 0.25, 'default')).not.toBe(changeColor(0.2, 0.25, 'default'));
    expect(changeColor(null, 0.25, 'default')).toBeUndefined();
  });
});
