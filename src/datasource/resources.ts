/**
 * Resource answers (GET apps, builds?app=, runs?app=&build=, functions?app=&q=)
 * are lists of names: plain strings, or objects whose name is in one of the
 * keys below. names() reads either form.
 */
const nameKeys = ['name', 'app', 'build', 'run', 'function', 'value'];

/** names extracts the list of names from a resource answer; anything else gives []. */
export function names(answer: unknown): string[] {
  const list = Array.isArray(answer) ? answer : answer && typeof answer === 'object' ? firstArray(answer) : [];
  const out: string[] = [];
  for (const item of list) {
    if (typeof item === 'string') {
      out.push(item);
    } else if (item && typeof item === 'object') {
      const key = nameKeys.find((k) => typeof (item as Record<string, unknown>)[k] === 'string');
      if (key) {
        out.push((item as Record<string, string>)[key]);
      }
    }
  }
  return out;
}

function firstArray(obj: object): unknown[] {
  const v = Object.values(obj).find(Array.isArray);
  return (v as unknown[]) ?? [];
}
