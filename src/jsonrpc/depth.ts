/**
 * How deeply a parsed JSON value nests (objects and arrays). A request nested thousands of levels
 * deep parses (V8's JSON.parse does not recurse) but breaks every later step that does —
 * JSON.stringify, the store's JSON, an upstream's parser — so the front refuses it first.
 *
 * The walk stops at the bound, so it never recurses deeper than `maxDepth` frames, and it visits
 * each container once without allocating: a message of ordinary shape costs a few hundred
 * nanoseconds (bench/micro/hot-path.ts). An own `"__proto__"` key, which JSON.parse creates, is
 * read as the own property it is, not as the prototype.
 */
export function tooDeep(value: unknown, maxDepth: number): string[] | undefined {
  const path: string[] = [];
  const walk = (node: unknown, depth: number): boolean => {
    if (typeof node !== "object" || node === null) return false;
    if (depth > maxDepth) return true;
    if (Array.isArray(node)) {
      for (let i = 0; i < node.length; i++) if (walk(node[i], depth + 1)) return found(String(i));
      return false;
    }
    for (const key in node) {
      const child = key === "__proto__" ? Object.getOwnPropertyDescriptor(node, key)?.value : (node as Record<string, unknown>)[key];
      if (walk(child, depth + 1)) return found(key);
    }
    return false;
  };
  const found = (key: string) => (path.push(key), true);
  return walk(value, 1) ? path.reverse() : undefined;
}

/** The place named in the error: the first few keys, enough to find the field. */
export function describeDeep(path: readonly string[], maxDepth: number): string {
  const shown = path
    .slice(0, 4)
    .map((k) => k.slice(0, 40))
    .join(".");
  return `${shown}${path.length > 4 ? ".…" : ""}: nested deeper than ${maxDepth} levels (objects and arrays)`;
}
