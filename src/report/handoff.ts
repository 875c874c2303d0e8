// What the first-paint script (first.ts) hands the page's main script: the
// answers it asked the server for (serve) and the parsed data (report), so
// that neither is asked for or parsed twice. Both scripts are bundles of
// their own; they meet on window.flamediffFirst.

/** Handoff is window.flamediffFirst. */
export interface Handoff {
  /** Answers to calls made before the main script ran, by callKey; each is taken once. */
  answers: Map<string, Promise<unknown>>;
  /** Those of them that have come, by callKey: the main script's first render can show them. */
  settled: Map<string, unknown>;
  /** The report's #flamediff-data, parsed. */
  reportData?: unknown;
}

/** handoff is the page's Handoff, created on first use. */
export function handoff(): Handoff {
  const w = window as unknown as { flamediffFirst?: Handoff };
  return (w.flamediffFirst ??= { answers: new Map(), settled: new Map() });
}

const callKey = (path: string, body?: object) => `${path} ${body ? JSON.stringify(body) : ''}`;

/**
 * call GETs path, or POSTs body as JSON (serve refuses any other type). An
 * answer the first-paint script already asked for (early) is taken instead.
 */
export function call<T>(path: string, body?: object): Promise<T> {
  const key = callKey(path, body);
  const { answers, settled } = handoff();
  const early = answers.get(key);
  if (early) {
    answers.delete(key);
    settled.delete(key);
    return early as Promise<T>;
  }
  return ask<T>(path, body);
}

/** answered takes an early answer to the call that has already come (as call would), else undefined. */
export function answered<T>(path: string, body?: object): T | undefined {
  const key = callKey(path, body);
  const { answers, settled } = handoff();
  if (!settled.has(key)) {
    return undefined;
  }
  const answer = settled.get(key) as T;
  answers.delete(key);
  settled.delete(key);
  return answer;
}

/** early asks now and keeps the answer for the main script's call of the same path and body. */
export function early<T>(path: string, body?: object): Promise<T> {
  const key = callKey(path, body);
  const answer = ask<T>(path, body);
  answer.then(
    (a) => handoff().settled.set(key, a),
    () => undefined // call hands the failure over
  );
  handoff().answers.set(key, answer);
  return answer;
}

async function ask<T>(path: string, body?: object): Promise<T> {
  const res = await fetch(
    path,
    body && { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) }
  );
  const answer = await res.json();
  if (!res.ok) {
    throw new Error(answer?.error ?? `${res.status} ${res.statusText}`);
  }
  return answer as T;
}
