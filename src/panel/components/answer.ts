/** An answer the panel asked for itself, or why it failed. */
export type Answer<T> = { value?: T; error?: string };

/** message is an error's text, whatever was thrown. */
export const message = (e: unknown) => (e instanceof Error ? e.message : String(e));
