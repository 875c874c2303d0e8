import { useCallback, useRef, useState } from 'react';

/**
 * useMeasuredHeight follows an element's height (at least min): the toolbar
 * wraps in a narrow panel, and the graph takes what it leaves. It returns the
 * height and the ref callback that measures the element.
 */
export function useMeasuredHeight(min: number): [number, (el: HTMLDivElement | null) => void] {
  const [height, setHeight] = useState(min);
  const observer = useRef<ResizeObserver | undefined>(undefined);
  const box = useCallback(
    (el: HTMLDivElement | null) => {
      observer.current?.disconnect();
      if (!el) {
        return;
      }
      // Measured at once (in the commit, before the first paint: a graph drawn at
      // one height and redrawn at another would flicker), then on every resize.
      const measure = () => setHeight(Math.max(min, el.offsetHeight));
      measure();
      if (typeof ResizeObserver !== 'undefined') {
        observer.current = new ResizeObserver(measure);
        observer.current.observe(el);
      }
    },
    [min]
  );
  return [height, box];
}
