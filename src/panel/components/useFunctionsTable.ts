import { useEffect, useMemo, useState } from 'react';

import { DataFrame } from '@grafana/data';

import { Normalization, isFlameFrame } from '../model/flameData';
import { Functions, isFunctionsFrame, parseFunctions, totalsOf, withSelfDeltas } from '../model/functions';
import { Querier } from '../query';
import { strings } from '../../strings';
import { Answer, message } from './answer';
import { useAfterPaint } from './useAfterPaint';
import { flamesOf } from './useFlameQueries';

interface Shown {
  /** The normalisation shown, and that of the panel's own frames. */
  norm: Normalization;
  own: Normalization;
  /** The answer of the query for the other normalisation, if shown. */
  alt?: Answer<DataFrame[]>;
}

/**
 * useFunctionsTable is the top table: the functions frame among the panel's
 * frames, else a functions query of the panel's own, issued after the graph
 * has painted, if wanted (the table is shown and the graph has data).
 * tableDue turns true after the graph's first paint.
 */
export function useFunctionsTable(
  series: DataFrame[],
  querier: Querier | undefined,
  { norm, own, alt }: Shown,
  wanted: boolean
) {
  const [fns, setFns] = useState<{ series: DataFrame[]; norm: Normalization; answer: Answer<Functions> }>();
  const fromSeries = useMemo(() => {
    const f = series.find(isFunctionsFrame);
    return f && parseFunctions(f);
  }, [series]);
  // The run totals a self delta is a share of: the root of the query's own tree.
  const totals = useMemo(() => {
    const whole = flamesOf(series, norm)[0] ?? alt?.value?.find(isFlameFrame);
    return whole && totalsOf(whole, norm);
  }, [series, norm, alt]);
  const functions: Answer<Functions> | undefined =
    fromSeries && norm === own
      ? { value: fromSeries }
      : fns?.series === series && fns.norm === norm
        ? fns.answer
        : undefined;
  const wantFunctions = wanted && !functions && Boolean(querier);
  useEffect(() => {
    if (!wantFunctions || !querier) {
      return;
    }
    let live = true;
    const id = setTimeout(() => {
      querier({ queryType: 'functions', normalize: norm, variants: false, focus: undefined })
        .then((res) => {
          const f = res.find(isFunctionsFrame);
          return f ? { value: parseFunctions(f) } : { error: strings.panel.noData };
        })
        .catch((e) => ({ error: message(e) }))
        .then((answer) => live && setFns({ series, norm, answer }));
    });
    return () => {
      live = false;
      clearTimeout(id);
    };
  }, [wantFunctions, querier, series, norm]);
  const rows = functions?.value;
  const table = useMemo(() => rows && withSelfDeltas(rows, totals), [rows, totals]);
  // A table at hand waits for the graph's first paint (the canvas draws in
  // the first animation frame): on a page's first load it would delay it.
  // Without one nothing waits: the render would only cost the first frames.
  const tableDue = useAfterPaint(Boolean(table));
  return { functions, table, tableDue };
}
