import { formattedValueToString, getValueFormat } from '@grafana/data';

/**
 * formatValue shows a value in the frame's unit (ns, bytes, short, ...).
 * Zero is a plain "0" in every unit (Grafana prints "0.00 ns", which reads
 * like a rounded measurement); pkg/frames.FormatValue does the same.
 */
export function formatValue(v: number, unit?: string): string {
  if (v === 0) {
    return '0';
  }
  return formattedValueToString(getValueFormat(unit || 'short')(v, 2));
}

/** Below this a p- or q-value prints as a bound: float rounding makes its digits meaningless. */
const P_FLOOR = 1e-15;

/** formatP shows a p- or q-value with two significant digits, "< 1e-15" when tinier. */
export function formatP(v: number): string {
  if (!Number.isFinite(v)) {
    return '–';
  }
  if (v < P_FLOOR) {
    return `< ${P_FLOOR.toExponential(0)}`;
  }
  return v < 1e-4 ? v.toExponential(1) : v.toPrecision(2);
}

/** formatShare shows a share as a signed or plain percentage; zero as a plain "0". */
export function formatShare(v: number, signed = false): string {
  if (!Number.isFinite(v)) {
    return '–';
  }
  if (v === 0) {
    return '0';
  }
  const pct = (v * 100).toFixed(Math.abs(v) < 0.001 ? 3 : 2);
  return `${signed && v > 0 ? '+' : ''}${pct}%`;
}
