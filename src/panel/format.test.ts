import { readFileSync } from 'fs';
import { join } from 'path';

import { formatValue } from './format';

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
