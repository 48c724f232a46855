import { Cluster, type Redis } from "ioredis";
import type { Logger } from "pino";
import type { RedisConnection } from "./connection.js";

/** store.waitForAof: "auto" asks each primary's INFO; true asks WAITAOF of every primary unasked; false never. */
export type WaitForAof = boolean | "auto";

/** How one primary's acknowledged writes are confirmed, and why. */
export interface Confirmation {
  /** WAIT, then WAITAOF 1 0: the primary has fsynced the write to its AOF too. */
  waitAof: boolean;
  reason: string;
}

/**
 * WAITAOF (https://redis.io/docs/latest/commands/waitaof/) exists from redis_version 7.2 (Valkey
 * reports one too), and asks the local fsync only of a primary whose AOF is on: numlocal 1 with
 * appendonly no is an error.
 */
export function aofSupport(serverInfo: string, persistenceInfo: string): Confirmation {
  const version = /^redis_version:(\S+?)\r?$/m.exec(serverInfo)?.[1];
  if (version === undefined) return { waitAof: false, reason: "INFO server names no redis_version" };
  const [major = 0, minor = 0] = version.split(".").map(Number);
  if (major < 7 || (major === 7 && minor < 2)) return { waitAof: false, reason: `redis_version ${version} has no WAITAOF (7.2 and later)` };
  if (!/^aof_enabled:1\r?$/m.test(persistenceInfo)) return { waitAof: false, reason: `redis_version ${version}, its AOF off (appendonly no)` };
  return { waitAof: true, reason: `redis_version ${version}, its AOF on` };
}

/**
 * Which primaries confirm acknowledged writes with WAITAOF 1 0 after WAIT, read per primary (a
 * Cluster's may differ) with the replica topology. A primary that answers WAITAOF with an error
 * is warned of once and confirmed by WAIT alone until the next read tries again.
 * Why WAIT stays: docs/contributing/architecture.md#waitaof-what-the-server-does-and-why-wait-stays
 */
export class AofConfirmation {
  /** By primary: "host:port" in a Cluster (as ioredis names its nodes), "" for the one primary. */
  private readonly detected = new Map<string, Confirmation>();
  private readonly refusedSinceRead = new Map<string, string>();
  /** The last refusal warned of, per primary. */
  private readonly warned = new Map<string, string>();

  constructor(
    private readonly connection: RedisConnection,
    readonly setting: WaitForAof,
    private readonly logger?: Logger,
  ) {}

  /** Whether writes to `primary` wait for WAITAOF 1 0 after WAIT. */
  waitsFor(primary: string): boolean {
    return (this.detected.get(primary)?.waitAof ?? false) && !this.refusedSinceRead.has(primary);
  }

  /** Per primary, how its acknowledged writes are confirmed now. */
  confirmations(): Map<string, Confirmation> {
    const now = new Map<string, Confirmation>();
    for (const [primary, found] of this.detected) {
      const refusal = this.refusedSinceRead.get(primary);
      now.set(primary, refusal === undefined ? found : { waitAof: false, reason: `it refused WAITAOF: ${refusal}` });
    }
    return now;
  }

  /** Reads every primary again; a change (the first read included) is logged. Never throws. */
  async read(): Promise<void> {
    if (this.setting === false) return;
    const nodes = await this.connection.call(primaries).catch(() => undefined);
    if (!nodes) return;
    const found = await Promise.all(
      nodes.map(async (node) => [this.connection.isCluster ? `${node.options.host}:${node.options.port}` : "", await this.detect(node)] as const),
    );
    const seen = new Set(found.map(([primary]) => primary));
    for (const primary of this.detected.keys()) if (!seen.has(primary)) this.forget(primary);
    this.refusedSinceRead.clear();
    for (const [primary, confirmation] of found) {
      if (this.detected.get(primary)?.waitAof !== confirmation.waitAof) {
        const how = confirmation.waitAof ? "WAIT, then WAITAOF 1 0 (fsynced to its AOF)" : "WAIT";
        this.logger?.info(
          { primary: label(primary), waitAof: confirmation.waitAof },
          `acknowledged writes to ${label(primary)} are confirmed by ${how}: ${confirmation.reason}`,
        );
      }
      this.detected.set(primary, confirmation);
    }
  }

  /** `primary` answered WAITAOF with an error: WAIT alone confirms its writes until the next read. */
  refused(primary: string, message: string): void {
    this.refusedSinceRead.set(primary, message);
    if (this.warned.get(primary) === message) return;
    this.warned.set(primary, message);
    this.logger?.warn(
      { primary: label(primary), refusal: message },
      `Redis at ${label(primary)} refused WAITAOF (${message}): its acknowledged writes are confirmed by WAIT alone (its replicas hold them in memory, not yet on disk); WAITAOF is tried again after the next topology read (store.waitForAof)`,
    );
  }

  private async detect(node: Redis): Promise<Confirmation> {
    if (this.setting === true) return { waitAof: true, reason: "store.waitForAof is true" };
    try {
      const [server, persistence] = await this.connection.call(() => Promise.all([node.info("server"), node.info("persistence")]));
      return aofSupport(server, persistence);
    } catch (err) {
      return { waitAof: false, reason: `INFO could not be read (${err instanceof Error ? err.message : String(err)})` };
    }
  }

  private forget(primary: string): void {
    this.detected.delete(primary);
    this.warned.delete(primary);
  }
}

/** ioredis learns of a promoted primary only from a redirect: it is asked where the primaries are now. */
async function primaries(client: Redis | Cluster): Promise<Redis[]> {
  if (!(client instanceof Cluster)) return [client];
  await new Promise<void>((resolve) => client.refreshSlotsCache(() => resolve()));
  return client.nodes("master");
}

function label(primary: string): string {
  return primary === "" ? "the primary" : primary;
}
