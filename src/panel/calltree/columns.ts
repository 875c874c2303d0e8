import { strings } from '../../strings';
import { formatP, formatShare, formatValue } from '../format';
import { FlameData } from '../model/flameData';
import { TreeColumn } from './model';

const t = strings.panel.tree;

export interface Column {
  key: TreeColumn;
  label: string;
}

/** Widths of the columns: the function takes what the figures leave, at least NAME_MIN. */
export const NAME_MIN = 180;
const NUM_WIDTH = 76;
const CI_WIDTH = 128;
/** The columns a narrow tree leaves out first: the selfs, then the interval (the tooltip and a wider tree show them). */
const DROP_ORDER: TreeColumn[] = ['baseSelf', 'headSelf', 'ci'];
export const widthOf = (c: Column) => (c.key === 'name' ? NAME_MIN : c.key === 'ci' ? CI_WIDTH : NUM_WIDTH);

/** fit leaves columns out, in DROP_ORDER, until the rest fit width. */
export function fit(cols: Column[], width: number): Column[] {
  let out = cols;
  for (const key of DROP_ORDER) {
    if (out.reduce((w, c) => w + widthOf(c), 0) <= width) {
      break;
    }
    out = out.filter((c) => c.key !== key);
  }
  return out;
}

/** columnsOf is the tree's columns: a diff's sides, change and statistics, or a single profile's self and total. */
export function columnsOf(data: FlameData): Column[] {
  if (!data.head) {
    return [
      { key: 'name', label: t.function },
      { key: 'headSelf', label: t.self },
      { key: 'headTotal', label: t.total },
    ];
  }
  const cols: Column[] = [
    { key: 'name', label: t.function },
    { key: 'headSelf', label: t.headSelf },
    { key: 'headTotal', label: t.headTotal },
    { key: 'baseSelf', label: t.baseSelf },
    { key: 'baseTotal', label: t.baseTotal },
    { key: 'delta', label: t.delta },
  ];
  if (data.stats) {
    cols.push({ key: 'ci', label: t.ci }, { key: 'q', label: t.q });
  }
  return cols;
}

/** figuresOf prints a row's figures, column by column (all but the function). */
export function figuresOf(data: FlameData, columns: Column[]): (i: number) => string[] {
  const head = data.head ?? data.base;
  const stats = data.stats;
  const cell = (key: TreeColumn, i: number): string => {
    switch (key) {
      case 'headSelf':
        return formatValue(head.self[i], data.unit);
      case 'headTotal':
        return formatValue(head.total[i], data.unit);
      case 'baseSelf':
        return formatValue(data.base.self[i], data.unit);
      case 'baseTotal':
        return formatValue(data.base.total[i], data.unit);
      case 'delta':
        return formatShare(data.delta[i], true);
      case 'ci': {
        const lo = stats?.deltaLow[i] ?? NaN;
        const hi = stats?.deltaHigh[i] ?? NaN;
        return Number.isFinite(lo) && Number.isFinite(hi)
          ? `${formatShare(lo, true)} .. ${formatShare(hi, true)}`
          : '–';
      }
      case 'q':
        return formatP(stats?.qValue[i] ?? NaN);
      default:
        return '';
    }
  };

  return (i) => columns.slice(1).map((c) => cell(c.key, i));
}
