/**
 * How deeply a parsed JSON value nests (objects and arrays). A request nested thousands of levels
 * deep parses (V8's JSON.parse does not recurse) but breaks every later step that does —
 * JSON.stringify, the store's JSON, an upstream's parser — so the front refuses it first (issue 17).
 *
 * The walk stops at the bound, so it never recurses deeper than `maxDepth` frames, and it visits
 * each container once: a message of ordinary shape costs a handful of steps. `Object.values` and
 * not `for…in`, so an own `"__proto__"` key (which JSON.parse creates) is walked too.
 */
export function tooDeep(value: unknown, maxDepth: number): string[] | undefined {
  const path: string[] = [];
  const walk = (node: unknown, depth: number): boolean => {
    if (typeof node !== "object" || node === null) return false;
    if (depth > maxDepth) return true;
    const keys = Array.isArray(node) ? undefined : Object.keys(node);
    const values = Array.isArray(node) ? node : Object.values(node);
    for (let i = 0; i < values.length; i++) {
      if (walk(values[i], depth + 1)) {
        path.push(keys ? keys[i]! : String(i));
        return true;
      }
    }
    return false;
  };
  return walk(value, 1) ? path.reverse() : undefined;
}

/** The place named in the error: the first few keys, enough to find the field. */
export function describeDeep(path: readonly string[], maxDepth: number): string {
  const shown = path.slice(0, 4).map((k) => k.slice(0, 40)).join(".");
  return `${shown}${path.length > 4 ? ".…" : ""}: nested deeper than ${maxDepth} levels (objects and arrays)`;
}
