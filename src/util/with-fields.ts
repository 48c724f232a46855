/**
 * `{ ...base, ...fields }`, built as `Object.assign` builds it. On Node 20 (V8 11.3) an object
 * literal that spreads one object and then adds a property it lacks kept the request's young
 * objects alive through two scavenges, then promoted them: a relayed call cost a quarter more
 * (docs/contributing/performance.md#spread-then-add). Node 22 and 24 do not.
 */
export function withFields<T extends object, F extends object>(base: T | undefined, fields: F): T & F {
  return Object.assign({}, base, fields) as T & F;
}

/** The own fields of `from`, but `a` and `b`, in their order: what a rest pattern copies, without its cost on a hot path. */
export function copyWithout(from: Record<string, unknown>, a: string, b: string): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(from)) if (key !== a && key !== b) keepField(out, key, from[key]);
  return out;
}

/** A field set as a spread sets it: `__proto__` from JSON is a field, not the prototype. */
export function keepField(to: Record<string, unknown>, key: string, value: unknown): void {
  if (key === "__proto__") Object.defineProperty(to, key, { value, enumerable: true, writable: true, configurable: true });
  else to[key] = value;
}
