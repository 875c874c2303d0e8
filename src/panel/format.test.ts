import { readFileSync } from 'fs';
import { join } from 'path';

import { formatP, formatShare, formatValue } from './format';

describe('formatP', () => {
  it('prints two significant digits, exponents under 1e-4, and a bound under 1e-15', () => {
    expect(formatP(0.0123)).toBe('0.012');
    expect(formatP(3.2e-7)).toBe('3.2e-7');
    expect(formatP(1.7e-92)).toBe('< 1e-15');
    expect(formatP(0)).toBe('< 1e-15');
    expect(formatP(NaN)).toBe('–');
  });
});

// The CLI prints values with pkg/frames.FormatValue; both are held to the
// same table (testdata/format/values.json, pkg/frames/format_test.go), so
// a CLI table reads like the panel.
describe('formatValue', () => {
  const cases: Array<{ unit: string; value: number; text: string }> = JSON.parse(
    readFileSync(join(__dirname, '..', '..', 'testdata', 'format', 'values.json'), 'utf8')
  );

  it('has the cases', () => {
    expect(cases.length).toBeGreaterThan(100);
  });

  it.each(cases)('$value $unit is $text', ({ unit, value, text }) => {
    expect(formatValue(value, unit)).toBe(text);
  });
});

describe('formatShare', () => {
  it('prints zero as a plain 0, signed or not', () => {
    expect(formatShare(0)).toBe('0');
    expect(formatShare(-0, true)).toBe('0');
    expect(formatShare(0.0123, true)).toBe('+1.23%');
    expect(formatShare(-0.0005, true)).toBe('-0.050%');
  });
});
