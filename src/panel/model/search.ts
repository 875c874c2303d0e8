import { FlameData } from './flameData';

/** A search: a case-insensitive substring, or one exact label (from the table). */
export interface SearchQuery {
  text: string;
  exact: boolean;
}

/** SearchResult marks matching nodes; count is the number of matching nodes. */
export interface SearchResult {
  match: Uint8Array;
  count: number;
}

/**
 * search matches labels once, then marks their nodes. An empty text matches
 * nothing (no highlight).
 */
export function search(data: FlameData, q: SearchQuery): SearchResult | undefined {
  if (q.text === '') {
    return undefined;
  }
  const needle = q.text.toLowerCase();
  const labelMatch = data.labels.map((l) => (q.exact ? l === q.text : l.toLowerCase().includes(needle)));
  const match = new Uint8Array(data.n);
  let count = 0;
  for (let i = 0; i < data.n; i++) {
    if (labelMatch[data.labelIdx[i]]) {
      match[i] = 1;
      count++;
    }
  }
  return { match, count };
}
