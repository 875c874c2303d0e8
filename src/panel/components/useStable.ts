import { useCallback, useLayoutEffect, useRef } from 'react';

/**
 * useStable is fn with one identity for the component's life, calling the
 * fn of the latest render: a memoised child given it does not render again
 * for a new closure of the same action.
 */
export function useStable<A extends unknown[], R>(fn: (...args: A) => R): (...args: A) => R {
  const latest = useRef(fn);
  useLayoutEffect(() => {
    latest.current = fn;
  });
  return useCallback((...args: A) => latest.current(...args), []);
}
