// The evolution matrix view, for FlamediffPanel: it draws the frames of an
// `evolution` query (pkg/frames/evolution.go).
import { DataFrame } from '@grafana/data';

import { isMatrixFrame } from './model';

export { EvolutionView } from './EvolutionView';
export type { EvolutionViewProps } from './EvolutionView';

/** isEvolutionData: the series hold an "evolution" frame with component, kind and build fields. */
export function isEvolutionData(series: DataFrame[]): boolean {
  return series.some(isMatrixFrame);
}
