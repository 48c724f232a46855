/**
 * What many requests compute alike, kept by the text it was computed from: at most `maxEntries`
 * (all dropped when full, so it never grows past that) and only for texts of at most
 * `maxKeyLength` characters, so its memory is bounded whatever callers send.
 */
export class TextKeyedCache<V> {
  private readonly entries = new Map<string, V>();

  constructor(
    private readonly maxEntries: number,
    private readonly maxKeyLength: number,
  ) {}

  /** The value kept for `key`, else `make()`'s, kept when `key` is short enough. */
  get(key: string, make: () => V): V {
    const known = this.entries.get(key);
    if (known !== undefined) return known;
    const value = make();
    if (key.length > this.maxKeyLength) return value;
    if (this.entries.size >= this.maxEntries) this.entries.clear();
    this.entries.set(key, value);
    return value;
  }
}
