import type { RedisConnection } from "./connection.js";

/** Ids grouped by the shard key each belongs to, for one command per shard. */
export function byShard(ids: readonly string[], shardOf: (id: string) => string): Map<string, string[]> {
  const groups = new Map<string, string[]>();
  for (const id of ids) {
    const shard = shardOf(id);
    const group = groups.get(shard);
    if (group) group.push(id);
    else groups.set(shard, [id]);
  }
  return groups;
}

type Entry = { id: string; score: number };

/** Highest score first, then the higher id: ZREVRANGE's order, and the memory store's. */
const before = (a: Entry, b: Entry) => a.score > b.score || (a.score === b.score && a.id > b.id);

/**
 * One shard of a sorted set split over several, read highest score first in batches. It goes on
 * from the last entry it returned (by score, not by rank), so entries removed while it reads do not
 * make it skip any. `after` starts it past an entry (the listing's cursor).
 */
class ShardReader {
  private readonly buffer: Entry[] = [];
  private skip = 0;
  private done = false;

  constructor(
    private readonly connection: RedisConnection,
    private readonly key: string,
    private readonly batch: number,
    private last?: Entry,
  ) {}

  async head(): Promise<Entry | undefined> {
    while (this.buffer.length === 0 && !this.done) await this.fill();
    return this.buffer[0];
  }

  take(): Entry | undefined {
    const entry = this.buffer.shift();
    if (entry) this.last = entry;
    return entry;
  }

  private async fill(): Promise<void> {
    const last = this.last;
    const max = last === undefined ? "+inf" : String(last.score);
    const flat = await this.connection.call((c) => c.zrevrangebyscore(this.key, max, "-inf", "WITHSCORES", "LIMIT", this.skip, this.batch));
    const read: Entry[] = [];
    for (let i = 0; i + 1 < flat.length; i += 2) read.push({ id: flat[i] as string, score: Number(flat[i + 1]) });
    this.done = read.length < this.batch;
    const fresh = read.filter((e) => last === undefined || before(last, e));
    // A whole batch of entries with the last one's score, all seen already: look further along.
    this.skip = fresh.length === 0 ? this.skip + read.length : 0;
    this.buffer.push(...fresh);
  }
}

/**
 * The shards merged into one order, in batches of ids: what one sorted set would give with
 * ZREVRANGE, past `after` when given. Each shard is read only as far as the listing goes.
 */
export async function* mergedShards(connection: RedisConnection, shards: readonly string[], batch: number, after?: Entry): AsyncIterable<string[]> {
  const readers = shards.map((key) => new ShardReader(connection, key, batch, after));
  let ids: string[] = [];
  for (;;) {
    const heads = await Promise.all(readers.map((r) => r.head()));
    let next = -1;
    for (const [i, head] of heads.entries()) {
      const best = heads[next];
      if (head && (best === undefined || before(head, best))) next = i;
    }
    if (next < 0) break;
    ids.push((readers[next] as ShardReader).take()?.id as string);
    if (ids.length === batch) {
      yield ids;
      ids = [];
    }
  }
  if (ids.length) yield ids;
}
