import { Dispatch, useMemo, useRef, useState } from 'react';

import { DataFrame } from '@grafana/data';

import { Culprits, culpritsFrameOf, parseCulprits } from '../model/culprits';
import { FlameData, Normalization, infoOf, isFlameFrame, toFlameData } from '../model/flameData';
import { nodeAtPath } from '../model/focus';
import { flameFramesByVariant, variantOf } from '../model/variants';
import { FlameViewAction, FlameViewState, chosenFor } from '../flameViewState';
import { Querier, keepNormalization } from '../query';
import { Answer, message } from './answer';
import { Drill } from './Breadcrumb';

function parse(frame: DataFrame | undefined): { data?: FlameData; error?: string } {
  try {
    return frame ? { data: toFlameData(frame) } : {};
  } catch (e) {
    return { error: message(e) };
  }
}

/** flamesOf keeps the flame graph frames of one normalisation. */
export function flamesOf(series: DataFrame[], norm: Normalization): DataFrame[] {
  return series.filter((f) => isFlameFrame(f) && infoOf(f).normalize === norm);
}

/**
 * useFlameQueries is the tree the flame view draws: from the panel's frames,
 * or from the queries it issues itself (the other normalisation, a `focus`
 * drill-down), with the verdict and culprits of its answer. It returns the
 * actions that issue those queries too.
 */
export function useFlameQueries(
  series: DataFrame[],
  querier: Querier | undefined,
  state: FlameViewState,
  dispatch: Dispatch<FlameViewAction>
) {
  const { inverted, collapsed } = state;
  // The normalisation of the panel's own frames, and the other one once queried.
  const own = useMemo(() => {
    const first = series.find(isFlameFrame);
    return first ? infoOf(first).normalize : 'absolute';
  }, [series]);
  // The normalisation shown and the drill-down hold for the frames they were chosen on.
  const { norm, drill } = chosenFor(state, series, own);
  const [queried, setQueried] = useState<{ series: DataFrame[]; norms: Map<Normalization, Answer<DataFrame[]>> }>();
  const seq = useRef(0);

  const alt = queried?.series === series ? queried.norms.get(norm) : undefined;
  const source = useMemo(() => {
    const local = flamesOf(series, norm);
    return drill?.series ?? (local.length > 0 ? local : alt?.value);
  }, [series, norm, drill, alt]);
  const frames = useMemo(() => flameFramesByVariant(source ?? []), [source]);
  const variant = variantOf(inverted, collapsed);
  const { data, error } = useMemo(() => parse(frames.get(variant) ?? frames.get('normal')), [frames, variant]);
  // The verdict and the culprits of the drawn tree: the frame after it in its answer.
  // A culprits frame that breaks its contract is the panel's error, as a bad flame frame is.
  const { value: culprits, error: culpritsError } = useMemo((): Answer<Culprits> => {
    const f = culpritsFrameOf(frames.get(variant) ?? frames.get('normal'), [series, alt?.value, drill?.series]);
    try {
      return { value: f && parseCulprits(f) };
    } catch (e) {
      return { error: message(e) };
    }
  }, [frames, variant, series, alt, drill]);

  const haveNorm = (v: Normalization) =>
    flamesOf(series, v).length > 0 || Boolean(queried?.series === series && queried.norms.get(v)?.value);
  const onNormalize = (v: Normalization) => {
    keepNormalization(v);
    dispatch({ type: 'normalize', of: series, norm: v });
    if (haveNorm(v) || !querier) {
      return;
    }
    const norms = new Map(queried?.series === series ? queried.norms : []);
    querier({ normalize: v, variants: true, focus: undefined })
      .then((res): Answer<DataFrame[]> => ({ value: res }))
      .catch((e): Answer<DataFrame[]> => ({ error: message(e) }))
      .then((answer) => setQueried({ series, norms: new Map(norms).set(v, answer) }));
  };
  const canNormalize = Boolean(querier) || (haveNorm('absolute') && haveNorm('relative'));

  // drillTo queries a subtree at full detail (path [] returns to the panel's frames).
  const drillTo = (path: string[]) => {
    const id = ++seq.current;
    dispatch({ type: 'drill', of: series, norm, path: querier ? path : [] });
    if (path.length === 0 || !querier) {
      return;
    }
    querier({ focus: path, normalize: norm, variants: false, inverted, collapseSystem: collapsed })
      .then((res): Drill => ({ path, series: res }))
      .catch((e): Drill => ({ path, error: message(e) }))
      .then((d) => {
        if (seq.current !== id) {
          return;
        }
        const node = d.series?.length ? nodeAtPath(toFlameData(d.series[0]), path) : -1;
        dispatch({ type: 'drilled', of: series, norm, drill: d, node });
      });
  };

  return {
    own,
    norm,
    drill,
    alt,
    source,
    frames,
    variant,
    data,
    error,
    culprits,
    culpritsError,
    onNormalize,
    canNormalize,
    drillTo,
  };
}
