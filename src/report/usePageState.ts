import { useCallback, useEffect, useMemo, useRef, useState } from 'react';

import type { PanelView, ViewHost } from '../panel/viewState';
import { PageState, decodeState, encodeState } from './urlState';

const fragment = () => window.location.hash.replace(/^#/, '');

/** withoutSearch drops the search text: typing it replaces the history entry instead of adding one. */
const withoutSearch = (s: PageState) => encodeState({ ...s, view: { ...s.view, search: undefined } });

/**
 * usePageState keeps a page's state in the URL fragment. state is what the
 * page renders from (its query and palette); host is the panel's ViewHost.
 * A change adds a history entry (a search's text replaces it); back/forward
 * or a pasted link change the fragment: the state is read again and
 * generation grows, so that the page mounts the panel afresh from it.
 */
export function usePageState() {
  const [state, setState] = useState<PageState>(() => decodeState(fragment()));
  const [generation, setGeneration] = useState(0);
  const current = useRef(state);
  const written = useRef(fragment());

  useEffect(() => {
    const onNavigate = () => {
      const h = fragment();
      if (h === written.current) {
        return; // our own write
      }
      written.current = h;
      current.current = decodeState(h);
      setState(current.current);
      setGeneration((g) => g + 1);
    };
    window.addEventListener('hashchange', onNavigate);
    window.addEventListener('popstate', onNavigate);
    return () => {
      window.removeEventListener('hashchange', onNavigate);
      window.removeEventListener('popstate', onNavigate);
    };
  }, []);

  /** update merges a change into the state and the URL; replace keeps the history entry. */
  const update = useCallback((patch: Omit<Partial<PageState>, 'view'>, view?: PanelView, replace = false) => {
    const prev = current.current;
    const next: PageState = { ...prev, ...patch, view: { ...prev.view, ...view } };
    current.current = next;
    const h = encodeState(next);
    if (h !== written.current) {
      written.current = h;
      if (replace || withoutSearch(next) === withoutSearch(prev)) {
        window.location.replace(`#${h}`);
      } else {
        window.location.hash = h;
      }
    }
    if (next.query !== prev.query || next.palette !== prev.palette) {
      setState(next);
    }
  }, []);

  const host = useMemo<ViewHost>(
    () => ({
      get view() {
        return current.current.view;
      },
      onChange: (v) => update({}, v),
    }),
    [update]
  );
  return { state, generation, host, update };
}
