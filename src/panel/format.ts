import { formattedValueToString, getValueFormat } from '@grafana/data';

/** formatValue shows a value in the frame's unit (ns, bytes, short, ...). */
export function formatValue(v: number, unit?: string): string {
  return formattedValueToString(getValueFormat(unit || 'short')(v, 2));
}

/** formatShare shows a share as a signed or plain percentage. */
export function formatShare(v: number, signed = false): string {
  if (!Number.isFinite(v)) {
    return '–';
  }
  const pct = (v * 100).toFixed(Math.abs(v) < 0.001 ? 3 : 2);
  return `${signed && v > 0 ? '+' : ''}${pct}%`;
}
