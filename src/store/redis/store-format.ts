import type { FormatClaim, FormatRecord, StoreFormatRecorder } from "../format.js";
import type { RedisConnection } from "./connection.js";
import type { RedisKeys } from "./keys.js";
import { recordFormat } from "./lua/record-format-1.js";
import type { ScriptRunner } from "./scripts.js";
import { strings } from "./task-replies.js";

/** Format 1's live index: `<prefix>{live:<n>}`, n < 16, sorted sets of task ids (store/format.ts). */
const FORMAT_1_LIVE_SHARDS = 16;
const LIVE_STATUSES = new Set(["working", "input_required"]);
/** Entries read per shard, newest first. */
const NEWEST = 10;

/** The store's format in `<prefix>{format}`, and the traces of format 1, which recorded none. */
export class RedisStoreFormat implements StoreFormatRecorder {
  readonly where: string;

  constructor(
    private readonly connection: RedisConnection,
    private readonly scripts: ScriptRunner,
    private readonly keys: RedisKeys,
  ) {
    this.where = `key prefix ${keys.prefix}`;
  }

  async record(claim: FormatClaim): Promise<FormatRecord> {
    return toRecord(strings(await this.scripts.run(recordFormat, [this.keys.format()], [claim.format, claim.oldest, claim.version])));
  }

  async read(): Promise<FormatRecord | undefined> {
    const [format, oldest, version] = await this.connection.call((c) => c.hmget(this.keys.format(), "format", "oldest", "version"));
    return format === null || format === undefined ? undefined : toRecord([format, oldest ?? format, version ?? "unknown"]);
  }

  /**
   * Tasks format 1 listed as live whose record is still non-terminal: a replica of that format
   * holds them, or held them when it stopped. Only the newest entries of each shard are looked at
   * (running tasks are among them while such a replica runs), so a large index of ended tasks
   * costs no more; entries of tasks that ended or expired are not counted.
   */
  async unrecordedTasks(limit: number): Promise<number> {
    // Every shard at once, then every record at once: two waits, not one per shard and per id.
    const shards = await Promise.all(
      Array.from({ length: FORMAT_1_LIVE_SHARDS }, (_, n) => this.connection.call((c) => c.zrange(this.keys.formatOneLiveShard(n), 0, NEWEST - 1, "REV"))),
    );
    const ids = shards.flat();
    const statuses = await Promise.all(ids.map((id) => this.connection.call((c) => c.hget(this.keys.task(id), "status"))));
    return Math.min(statuses.filter((status) => status !== null && LIVE_STATUSES.has(status)).length, limit);
  }
}

function toRecord([format, oldest, version]: string[]): FormatRecord {
  return { format: Number(format), oldest: Number(oldest), version: version ?? "unknown" };
}
