import React, { useContext, useEffect, useMemo, useState } from 'react';

import { DataFrame } from '@grafana/data';
import { Alert } from '@grafana/ui';

import { selectors } from '../../selectors';
import { strings } from '../../strings';
import { Around, aroundPatch, cleanAround, filterKeys, sameAround, sandwichOf } from '../model/around';
import { isDiffFrame, isFlameFrame } from '../model/flameData';
import { Querier } from '../query';
import { FiltersContext, SandwichContext, ViewContext } from '../viewState';
import { message } from './answer';
import { FlameView, FlameViewProps } from './FlameView';
import { SandwichView } from './Sandwich';
import { AroundBar } from './Toolbar';

interface Props extends FlameViewProps {
  /** What the panel's own query asked (its frames answer that). */
  asked: Around;
  /** Keeps an ask outside the panel (in Grafana, the dashboard variables). */
  onAsk?: (a: Around) => void;
}

const AROUND_HEIGHT = 36;
const NOTE_HEIGHT = 52;

/** An ask's answer: frames, or the backend's message (an answer without a flame graph says why). */
type Answer = { ask: Around; frames?: DataFrame[]; error?: string };

function answerOf(ask: Around, frames: DataFrame[]): Answer {
  if (frames.some(isFlameFrame)) {
    return { ask, frames };
  }
  const notices = frames.flatMap((f) => f.meta?.notices ?? []).map((n) => n.text);
  return { ask, error: notices.join('; ') || strings.panel.noData };
}

/**
 * AroundView asks around a culprit on top of the panel's query: the filters
 * and only (the graph of what is left) or a sandwich (the function's callers
 * and callees). An ask other than the query's own is queried; a refused one
 * shows the backend's message and keeps the last good graph.
 */
export function AroundView({ series, querier, options, width, height, asked, onAsk }: Props) {
  const host = useContext(ViewContext);
  // A host page starts from its URL's ask; the ask holds for the frames it was made on.
  const [chosen, setChosen] = useState(() => ({ series, ask: host ? cleanAround(host.view) : asked }));
  const ask = chosen.series === series ? chosen.ask : asked;
  const own = sameAround(ask, asked);
  const key = JSON.stringify(cleanAround(ask));
  const [answer, setAnswer] = useState<Answer>();
  const [open, setOpen] = useState(false);
  const [good, setGood] = useState<{ series: DataFrame[]; answer: Answer }>();

  useEffect(() => {
    if (own || !querier) {
      return;
    }
    let live = true;
    // A sandwich is drawn without the variant toggles: no need for them.
    querier({ ...aroundPatch(ask), focus: undefined, ...(ask.sandwich ? { variants: false } : {}) })
      .then((frames) => answerOf(ask, frames))
      .catch((e): Answer => ({ ask, error: message(e) }))
      .then((a) => {
        if (live) {
          setAnswer(a);
          if (a.frames) {
            setGood({ series, answer: a });
          }
        }
      });
    return () => {
      live = false;
    };
    // key stands for ask.
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [key, own, querier, series]);

  useEffect(() => {
    host?.onChange(aroundPatch(ask));
    // key stands for ask.
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [key, host]);

  const current = !own && answer && sameAround(answer.ask, ask) ? answer : undefined;
  const last = good?.series === series ? good.answer : undefined;
  const shown: Answer = own
    ? { ask: asked, frames: series }
    : current?.frames
      ? current
      : (last ?? { ask: asked, frames: series });
  const shownKey = JSON.stringify(cleanAround(shown.ask));
  // The graph's own queries (drill-down, the table, the other normalisation) keep the shown ask.
  const inner = useMemo<Querier | undefined>(
    () => querier && ((patch) => querier({ ...aroundPatch(shown.ask), ...patch })),
    // shownKey stands for shown.ask.
    // eslint-disable-next-line react-hooks/exhaustive-deps
    [querier, shownKey]
  );
  const frames = shown.frames ?? series;
  const sandwich = useMemo(() => sandwichOf(frames), [frames]);

  const setAsk = (a: Around) => {
    const next = cleanAround(a);
    setChosen({ series, ask: next });
    onAsk?.(next);
  };
  const showSandwich = (fn: string) => setAsk({ ...ask, sandwich: fn });
  const needsServe = !own && !querier;
  const barShown = open || Boolean(ask.only) || filterKeys.some((k) => ask[k]) || Boolean(current?.error);
  const filters = useMemo(() => ({ open: barShown, toggle: () => setOpen(!barShown) }), [barShown]);
  const isDiff = series.some(isDiffFrame);
  const inside = height - (barShown ? AROUND_HEIGHT : 0) - (needsServe ? NOTE_HEIGHT : 0);

  return (
    <div style={{ width, height }}>
      {barShown && (
        <AroundBar
          ask={ask}
          onAsk={setAsk}
          isDiff={isDiff}
          canQuery={Boolean(querier)}
          loading={!own && Boolean(querier) && !current}
          error={current?.error}
        />
      )}
      {needsServe && (
        <Alert title={strings.panel.around.needsServe} severity="info" data-testid={selectors.panel.aroundNeedsServe} />
      )}
      <FiltersContext.Provider value={filters}>
        <SandwichContext.Provider value={showSandwich}>
          {sandwich ? (
            <SandwichView
              sandwich={sandwich}
              options={options}
              width={width}
              height={inside}
              onBack={() => setAsk({ ...ask, sandwich: undefined })}
            />
          ) : (
            <FlameView series={frames} querier={inner} options={options} width={width} height={inside} />
          )}
        </SandwichContext.Provider>
      </FiltersContext.Provider>
    </div>
  );
}
