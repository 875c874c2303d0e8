import { formattedValueToString, getValueFormat } from '@grafana/data';

/** formatValue shows a value in the frame's unit (ns, bytes, short, ...). */
export function formatValue(v: number, unit?: string): string {
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

/** formatShare shows a share as a signed or plain percentage. */
export function formatShare(v: number, signed = false): string {
  if (!Number.isFinite(v)) {
    return '–';
  }
  const pct = (v * 100).toFixed(Math.abs(v) < 0.001 ? 3 : 2);
  return `${signed && v > 0 ? '+' : ''}${pct}%`;
}
