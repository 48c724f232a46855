import { Redis } from "ioredis";
import type { Logger } from "pino";
import type { AofConfirmation } from "./aof-confirm.js";
import { hostPort, type RedisConnection, type RedisTarget, type SentinelTarget } from "./connection.js";

/** store.waitForReplicas: every replica the topology lists, or a fixed number. */
export type WaitForReplicas = "listed" | number;

const SLOTS = 16_384;
/** How often the topology is read again; an unconfirmed write reads it at once (at most once a second). */
const REFRESH_MS = 2_000;
const SOON_MS = 1_000;

/**
 * How many replicas an acknowledged write must reach before it is acknowledged (Redis WAIT,
 * https://redis.io/docs/latest/commands/wait/): by default, every replica a failover could promote
 * as the topology lists it. In a Cluster, the replicas CLUSTER NODES lists for the write's slot;
 * with Sentinel, the replicas the sentinels list for the primary, but those they see down; for
 * one server by URL, the replicas connected to it (INFO replication). Read again every two seconds
 * and after a write it could not confirm, so a failover's new topology is followed within seconds;
 * each primary's WAITAOF (aof-confirm.ts) is read with it.
 */
export class ReplicaTopology {
  private single = 0;
  private readonly bySlot = new Uint8Array(SLOTS);
  private timer?: NodeJS.Timeout;
  private lastRead = 0;
  private reading?: Promise<void>;
  private readonly sentinels: SentinelAsker | undefined;
  /** Settles once the topology was read (or could not be) the first time: no write decides before. */
  readonly firstRead: Promise<void>;
  known = false;

  constructor(
    private readonly connection: RedisConnection,
    target: RedisTarget,
    private readonly waitFor: WaitForReplicas,
    private readonly logger?: Logger,
    /** Read with the topology, where any write waits at all. */
    readonly aof?: AofConfirmation,
  ) {
    this.sentinels = "sentinel" in target && waitFor === "listed" ? new SentinelAsker(target.sentinel) : undefined;
    this.firstRead = this.start().finally(() => (this.known = true));
  }

  /**
   * Read the topology now, then every REFRESH_MS. A topology that cannot be read (a hosted service
   * that refuses INFO or CLUSTER SLOTS) waits for no replica until it can, and says so: set
   * store.waitForReplicas to a number there.
   */
  private async start(): Promise<void> {
    if (this.waitFor !== "listed" && !this.readsAof) return;
    this.timer = setInterval(() => void this.refresh().catch(() => undefined), REFRESH_MS);
    this.timer.unref();
    await this.refresh().catch((err: unknown) =>
      this.logger?.warn(
        { err },
        "could not read which replicas the Redis primary has: acknowledged writes wait for none until it can be read (store.waitForReplicas)",
      ),
    );
  }

  /** Replicas a write to `slot` waits for (slot: Cluster only). */
  needed(slot?: number): number {
    if (this.waitFor !== "listed") return this.waitFor;
    return slot === undefined || !this.connection.isCluster ? this.single : (this.bySlot[slot] ?? 0);
  }

  /** A write could not be confirmed: the topology may have changed (a failover); read it again soon. */
  refreshSoon(): void {
    if ((this.waitFor !== "listed" && !this.readsAof) || Date.now() - this.lastRead < SOON_MS) return;
    void this.refresh().catch(() => undefined);
  }

  close(): void {
    clearInterval(this.timer);
    this.sentinels?.close();
  }

  private refresh(): Promise<void> {
    this.reading ??= this.read().finally(() => {
      this.reading = undefined;
      this.lastRead = Date.now();
    });
    return this.reading;
  }

  private get readsAof(): boolean {
    return this.waitFor !== 0 && this.aof !== undefined && this.aof.setting !== false;
  }

  private async read(): Promise<void> {
    try {
      if (this.waitFor === "listed") await this.readReplicas();
    } finally {
      if (this.readsAof) await this.aof?.read();
    }
  }

  private async readReplicas(): Promise<void> {
    if (this.sentinels) this.single = await this.sentinels.replicas();
    else if (this.connection.isCluster) this.readNodes(String(await this.connection.call((c) => c.call("CLUSTER", "NODES"))));
    else this.single = connectedReplicas(String(await this.connection.call((c) => (c as Redis).info("replication"))));
  }

  /**
   * CLUSTER NODES (https://redis.io/docs/latest/commands/cluster-nodes/): each primary's slots, and
   * the replicas that name it as their primary, failed ones aside. Not CLUSTER SLOTS, which leaves
   * out a replica that has received no write yet (a new cluster's), one a failover may still promote.
   */
  private readNodes(text: string): void {
    const lines = text
      .split("\n")
      .map((l) => l.trim().split(" "))
      .filter((f) => f.length >= 8);
    const replicas = new Map<string, number>();
    for (const [, , flags, primary] of lines) {
      if (!flags || !primary || primary === "-" || /(^|,)(fail|noaddr|handshake)(,|$)/.test(flags)) continue;
      replicas.set(primary, (replicas.get(primary) ?? 0) + 1);
    }
    this.bySlot.fill(0);
    for (const [id, , flags, , , , , , ...slots] of lines) {
      if (!id || !flags || !/(^|,)master(,|$)/.test(flags)) continue;
      const count = Math.min(replicas.get(id) ?? 0, 255);
      for (const range of slots) {
        const m = /^(\d+)(?:-(\d+))?$/.exec(range);
        if (m) this.bySlot.fill(count, Number(m[1]), Number(m[2] ?? m[1]) + 1);
      }
    }
  }
}

/** `connected_slaves:N` of INFO replication; 0 on a server that is not a primary. */
export function connectedReplicas(info: string): number {
  if (!/^role:master\r?$/m.test(info)) return 0;
  return Number(/^connected_slaves:(\d+)\r?$/m.exec(info)?.[1] ?? 0);
}

/** Flags of a replica a failover would not promote (SENTINEL REPLICAS). */
const NOT_PROMOTABLE = /(^|,)(s_down|o_down|disconnected)(,|$)/;

/** SENTINEL REPLICAS <name>, asked of the first sentinel that answers. */
class SentinelAsker {
  private readonly clients: Redis[];

  constructor(private readonly target: SentinelTarget) {
    this.clients = target.nodes.map(
      (node) =>
        new Redis({
          ...hostPort(node),
          ...(target.sentinelUsername !== undefined ? { username: target.sentinelUsername } : {}),
          ...(target.sentinelPassword !== undefined ? { password: target.sentinelPassword } : {}),
          ...(target.tls ? { tls: {} } : {}),
          connectionName: "taskgate:topology",
          lazyConnect: true,
          maxRetriesPerRequest: 0,
          enableOfflineQueue: true,
          connectTimeout: 1_000,
          commandTimeout: 1_000,
          retryStrategy: () => 1_000,
        }),
    );
    // A sentinel that is down is tried after the others; its errors are this asker's to ignore.
    for (const client of this.clients) client.on("error", () => undefined);
  }

  async replicas(): Promise<number> {
    let last: unknown;
    for (const client of this.clients) {
      try {
        const reply = (await client.call("SENTINEL", "REPLICAS", this.target.name)) as unknown[];
        return reply.filter((r) => !NOT_PROMOTABLE.test(field(r, "flags"))).length;
      } catch (err) {
        last = err;
      }
    }
    throw last instanceof Error ? last : new Error("no sentinel answered");
  }

  close(): void {
    for (const client of this.clients) client.disconnect();
  }
}

/** A field of a flat [name, value, name, value...] reply. */
function field(entry: unknown, name: string): string {
  if (!Array.isArray(entry)) return "";
  const i = entry.indexOf(name);
  return i >= 0 && i % 2 === 0 ? String(entry[i + 1] ?? "") : "";
}
