/**
 * The only place Redis key and channel names are built.
 *
 * Every key of one session or task carries the same hash tag (the part in braces), so Redis
 * Cluster puts them in one slot and one script may touch them all:
 *   session       <prefix>{s:<id>}
 *   task (next)   <prefix>{t:<id>}, its parts <prefix>{t:<id>}:<part> (result, lease, ...)
 *   channel       <prefix>ch:<name>   (pub/sub is not slot-bound; no tag needed)
 */
export class RedisKeys {
  constructor(readonly prefix: string) {
    // A brace in the prefix would become the hash tag of every key and put all in one slot.
    if (/[{}]/.test(prefix)) throw new RangeError(`store.keyPrefix must not contain braces: ${prefix}`);
  }

  session(id: string): string {
    return `${this.prefix}{s:${id}}`;
  }

  channel(name: string): string {
    return `${this.prefix}ch:${name}`;
  }
}
