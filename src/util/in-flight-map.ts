/** Sets between copies: a chain of tables is cut within this many. */
const RENEW_EVERY = 1024;

/**
 * A Map for entries that come and go with each call (in flight, by id). V8 points each hash table
 * a Map leaves behind at the table that replaced it; once one of them is in old space, the
 * scavenger keeps every later table alive, and with them every entry they held, until a full
 * collection (docs/contributing/performance.md#maps-that-churn). Copied into a new Map every
 * 1,024 sets, the chain is cut. An iteration sees the entries as they were when it began if a
 * set renews the map meanwhile: iterate a copy where the loop sets.
 */
export class InFlightMap<K, V> {
  private map = new Map<K, V>();
  private sets = 0;

  get size(): number {
    return this.map.size;
  }

  get(key: K): V | undefined {
    return this.map.get(key);
  }

  has(key: K): boolean {
    return this.map.has(key);
  }

  set(key: K, value: V): this {
    this.map.set(key, value);
    if (++this.sets >= RENEW_EVERY) {
      this.map = new Map(this.map);
      this.sets = 0;
    }
    return this;
  }

  delete(key: K): boolean {
    return this.map.delete(key);
  }

  clear(): void {
    this.map = new Map();
    this.sets = 0;
  }

  keys(): MapIterator<K> {
    return this.map.keys();
  }

  values(): MapIterator<V> {
    return this.map.values();
  }

  entries(): MapIterator<[K, V]> {
    return this.map.entries();
  }

  [Symbol.iterator](): MapIterator<[K, V]> {
    return this.map[Symbol.iterator]();
  }
}
