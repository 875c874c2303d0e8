/**
 * The query types (docs/QUERIES.md), one row each: what the model of each holds.
 * The Go registry (pkg/query/registry.go) has the same rows; a Go test
 * (TestRegistriesAgree) compares the two and docs/QUERIES.md. The table is
 * JSON so that the test reads it as is: keep it so.
 *
 * head, base, builds: whether the type reads that selection ("required" needs
 * builds). fields: the options it reads besides app, profileType and its
 * selections. tree: answered by the tree engine; flame: with flame graphs.
 */
// prettier-ignore
export const queryTypeTable = [
  {"type": "flamegraph", "head": "required", "base": "unused", "builds": "unused", "tree": true, "flame": true, "fields": ["inverted", "collapseSystem", "maxNodes", "keep", "drop", "hideFrames", "showFrom", "focus", "variants", "sandwich"]},
  {"type": "diff", "head": "required", "base": "required", "builds": "unused", "tree": true, "flame": true, "fields": ["inverted", "collapseSystem", "maxNodes", "keep", "drop", "hideFrames", "showFrom", "normalize", "alpha", "focus", "variants", "sandwich", "only"]},
  {"type": "functions", "head": "required", "base": "optional", "builds": "unused", "tree": true, "flame": false, "fields": ["inverted", "collapseSystem", "maxNodes", "keep", "drop", "hideFrames", "showFrom", "normalize", "alpha", "only"]},
  {"type": "runs", "head": "required", "base": "optional", "builds": "unused", "tree": false, "flame": false, "fields": []},
  {"type": "evolution", "head": "unused", "base": "unused", "builds": "optional", "tree": false, "flame": false, "fields": ["threshold", "minShare", "minChange", "alpha"]},
  {"type": "timeseries", "head": "unused", "base": "unused", "builds": "optional", "tree": false, "flame": false, "fields": ["function", "baseline", "field", "minChange", "alpha"]},
  {"type": "changepoints", "head": "unused", "base": "unused", "builds": "optional", "tree": false, "flame": false, "fields": ["minShare", "minChange", "alpha"]}
] as const;

/** Query types (docs/QUERIES.md). */
export type QueryType = (typeof queryTypeTable)[number]['type'];

/** A model option some query types read. */
export type QueryField = (typeof queryTypeTable)[number]['fields'][number];

/** QueryTypeSpec is a row of the table. */
export type QueryTypeSpec = (typeof queryTypeTable)[number];

/** queryTypes lists the types in the table's order. */
export const queryTypes: QueryType[] = queryTypeTable.map((t) => t.type);

/**
 * specOf returns a type's row; an unknown type (a model saved by a newer
 * version, or hand-edited) gets the row of none: no pickers, no options.
 */
export function specOf(t: string | undefined): QueryTypeSpec | undefined {
  return queryTypeTable.find((r) => r.type === t);
}

/** uses reports whether a query of type t reads the option f. */
export function uses(t: string | undefined, f: QueryField): boolean {
  return (specOf(t)?.fields as readonly string[] | undefined)?.includes(f) ?? false;
}

/** isFlame reports whether a query of type t is answered with flame graphs. */
export function isFlame(t: string | undefined): boolean {
  return specOf(t)?.flame ?? false;
}
