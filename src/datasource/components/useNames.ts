import { useEffect, useState } from 'react';

import { SelectableValue } from '@grafana/data';

/** Loaded picker options, or the error that prevented loading them. */
export interface Names {
  options: Array<SelectableValue<string>>;
  loading: boolean;
  error?: string;
}

/**
 * useNames loads a resource list whenever key changes (nothing when key is
 * empty) and turns it into Select options; a stale answer is dropped. While
 * a new key loads, the previous options stay.
 */
export function useNames(key: string, load: () => Promise<string[]>): Names {
  const [loaded, setLoaded] = useState<Names & { key: string }>({ key: '', options: [], loading: false });
  useEffect(() => {
    if (key === '') {
      return;
    }
    let live = true;
    load().then(
      (list) => live && setLoaded({ key, options: list.map((v) => ({ value: v, label: v })), loading: false }),
      (e) => live && setLoaded({ key, options: [], loading: false, error: e?.data?.message ?? e?.message ?? String(e) })
    );
    return () => {
      live = false;
    };
    // load changes identity every render; key says when to reload.
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [key]);
  if (key === '') {
    return { options: [], loading: false };
  }
  return loaded.key === key ? loaded : { options: loaded.options, loading: true };
}

/** withSelected keeps chosen values (e.g. template variables) among the options. */
export function withSelected(
  options: Array<SelectableValue<string>>,
  values: string[]
): Array<SelectableValue<string>> {
  const known = new Set(options.map((o) => o.value));
  return [...options, ...values.filter((v) => !known.has(v)).map((v) => ({ value: v, label: v }))];
}
