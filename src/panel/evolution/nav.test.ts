import { Cell, Component } from './model';
import { firstGlyph, glyphLabel, isNavKey, moveGlyph, nearestCol, scrollToShow } from './nav';

const cell = (over: Partial<Cell> = {}): Cell => ({
  time: 1000,
  share: 0.25,
  change: 0.1,
  modified: 2,
  added: 1,
  modifiedMethods: [],
  addedMethods: [],
  changePoints: [],
  pValue: null,
  qValue: null,
  significant: null,
  ...over,
});

/** A row from a pattern: 'x' a glyph, '.' none. */
const row = (name: string, pattern: string): Component =>
  ({
    key: `method:${name}`,
    name,
    kind: 'method',
    depth: 0,
    children: [],
    cells: [...pattern].map((ch) => (ch === 'x' ? cell() : undefined)),
    peakShare: 0,
    maxTime: 0,
  }) as Component;

// Builds 0..4 across, components down.
const rows = [
  row('a', '..xx.'), // 0
  row('b', '.....'), // 1: absent everywhere
  row('c', 'x...x'), // 2
  row('d', 'xxxxx'), // 3
];

describe('glyph keyboard navigation', () => {
  it('starts at the first glyph of the first row that has one', () => {
    expect(firstGlyph(rows)).toEqual({ row: 0, col: 2 });
    expect(firstGlyph([rows[1], rows[2]])).toEqual({ row: 1, col: 0 });
    expect(firstGlyph([rows[1]])).toBeUndefined();
    expect(firstGlyph([])).toBeUndefined();
  });

  it('moves left and right over the builds, skipping absent ones, and stops at the ends', () => {
    expect(moveGlyph(rows, { row: 2, col: 0 }, 'ArrowRight')).toEqual({ row: 2, col: 4 });
    expect(moveGlyph(rows, { row: 2, col: 4 }, 'ArrowLeft')).toEqual({ row: 2, col: 0 });
    expect(moveGlyph(rows, { row: 2, col: 4 }, 'ArrowRight')).toEqual({ row: 2, col: 4 });
    expect(moveGlyph(rows, { row: 0, col: 2 }, 'ArrowLeft')).toEqual({ row: 0, col: 2 });
  });

  it('goes to the first and last glyph of the row with Home and End', () => {
    expect(moveGlyph(rows, { row: 0, col: 3 }, 'Home')).toEqual({ row: 0, col: 2 });
    expect(moveGlyph(rows, { row: 0, col: 2 }, 'End')).toEqual({ row: 0, col: 3 });
  });

  it('moves up and down to the nearest glyph of the next row with one, skipping empty rows', () => {
    expect(moveGlyph(rows, { row: 0, col: 2 }, 'ArrowDown')).toEqual({ row: 2, col: 0 }); // tie: the left one
    expect(moveGlyph(rows, { row: 0, col: 3 }, 'ArrowDown')).toEqual({ row: 2, col: 4 });
    expect(moveGlyph(rows, { row: 2, col: 4 }, 'ArrowDown')).toEqual({ row: 3, col: 4 });
    expect(moveGlyph(rows, { row: 3, col: 1 }, 'ArrowUp')).toEqual({ row: 2, col: 0 });
    expect(moveGlyph(rows, { row: 3, col: 1 }, 'ArrowDown')).toEqual({ row: 3, col: 1 });
    expect(moveGlyph(rows, { row: 0, col: 2 }, 'ArrowUp')).toEqual({ row: 0, col: 2 });
  });

  it('pages by rows that have glyphs, stopping at the last', () => {
    expect(moveGlyph(rows, { row: 0, col: 2 }, 'PageDown', 2)).toEqual({ row: 3, col: 2 });
    expect(moveGlyph(rows, { row: 0, col: 2 }, 'PageDown', 10)).toEqual({ row: 3, col: 2 });
    expect(moveGlyph(rows, { row: 3, col: 3 }, 'PageUp', 10)).toEqual({ row: 0, col: 3 });
  });

  it('finds the nearest column with a glyph', () => {
    expect(nearestCol(rows, 2, 1)).toBe(0);
    expect(nearestCol(rows, 2, 3)).toBe(4);
    expect(nearestCol(rows, 1, 2)).toBe(-1);
    expect(nearestCol(rows, 9, 2)).toBe(-1);
  });

  it('knows its keys', () => {
    expect(['ArrowUp', 'Home', 'PageDown'].every(isNavKey)).toBe(true);
    expect(['Enter', 'Escape', 'a', 'Tab'].some(isNavKey)).toBe(false);
  });
});

describe('scrollToShow', () => {
  it('keeps the scroll when the item is in view', () => {
    expect(scrollToShow(100, 200, 150, 28)).toBe(100);
  });
  it('scrolls back to an item above and forward to one below, as little as possible', () => {
    expect(scrollToShow(100, 200, 40, 28)).toBe(40);
    expect(scrollToShow(100, 200, 300, 28)).toBe(128);
  });
  it('shows the start of an item larger than the view', () => {
    expect(scrollToShow(0, 20, 100, 28)).toBe(100);
  });
});

describe('glyphLabel', () => {
  const build = { name: '1.7.0', time: 0 };
  it('names the component, build, time, share, change and changed methods', () => {
    const label = glyphLabel(rows[0], build, cell(), '');
    expect(label).toContain('method a');
    expect(label).toContain('build 1.7.0');
    expect(label).toContain('share 25.00%');
    expect(label).toContain('change +10.00%');
    expect(label).toContain('2 modified and 1 added');
    expect(label).not.toContain('change point');
  });
  it('says there is no previous build to compare with', () => {
    expect(glyphLabel(rows[0], build, cell({ change: null }))).toContain('change no previous build');
  });
  it('names the largest change point and how many start here', () => {
    const cp = (fn: string, change: number | null, before: number, after: number) => ({
      function: fn,
      change,
      before,
      after,
      pValue: 0.001,
    });
    const one = glyphLabel(rows[0], build, cell({ changePoints: [cp('pkg.F', 0.5, 10, 15)] }));
    expect(one).toContain('change point starts here: pkg.F +50.00% (slower)');
    const two = glyphLabel(rows[0], build, cell({ changePoints: [cp('pkg.G', null, 0, 5), cp('pkg.F', -0.2, 10, 8)] }));
    expect(two).toContain('2 change points start here, the largest: pkg.G new (slower)');
  });
});
