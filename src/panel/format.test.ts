import { formatP } from './format';

describe('formatP', () => {
  it('prints two significant digits, exponents under 1e-4, and a bound under 1e-15', () => {
    expect(formatP(0.0123)).toBe('0.012');
    expect(formatP(3.2e-7)).toBe('3.2e-7');
    expect(formatP(1.7e-92)).toBe('< 1e-15');
    expect(formatP(0)).toBe('< 1e-15');
    expect(formatP(NaN)).toBe('–');
  });
});
