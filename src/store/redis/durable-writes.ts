import { Cluster, type Redis } from "ioredis";
import type { AofConfirmation } from "./aof-confirm.js";
import { StoreUnavailableError, StoreUnconfirmedError } from "../contract.js";
import type { RedisConnection } from "./connection.js";
import { toStoreError } from "./errors.js";
import { keySlot } from "./key-slot.js";
import type { ReplicaTopology } from "./replicas.js";
import { isNoScript, type LuaScript, type ScriptCall, type ScriptRunner } from "./scripts.js";

export type DurableCall = ScriptCall & { script: LuaScript };

/** Writes per pipeline: one WAIT confirms them all. */
const MAX_BATCH = 500;

interface Queued {
  call: DurableCall;
  resolve: (reply: unknown) => void;
  reject: (err: unknown) => void;
}

interface Group {
  queue: Queued[];
  running: boolean;
}

/**
 * Acknowledged writes, each pipeline of them ended by WAIT (https://redis.io/docs/latest/commands/wait/),
 * then WAITAOF 1 0 where the primary has it (https://redis.io/docs/latest/commands/waitaof/), and
 * group-committed per primary; not confirmed in time: StoreUnconfirmedError.
 * Why and how: docs/contributing/architecture.md#acknowledged-writes-on-replicated-redis
 */
export class DurableWrites {
  private readonly groups = new Map<string, Group>();

  constructor(
    /** The store's own connection: writes that wait for nothing go there, as any other. */
    private readonly plain: ScriptRunner,
    /** A connection of its own, and its scripts: the writes that wait. */
    private readonly connection: RedisConnection,
    private readonly scripts: ScriptRunner,
    private readonly topology: ReplicaTopology,
    private readonly waitTimeoutMs: number,
    private readonly callTimeoutMs: number,
    private readonly aof?: AofConfirmation,
  ) {}

  /** The script's reply once its replicas have it; where none is needed, a plain call. */
  run(call: DurableCall): Promise<unknown> {
    const slot = this.connection.isCluster ? keySlot(call.keys[0] ?? "") : undefined;
    if (!this.topology.known) return this.topology.firstRead.then(() => this.run(call));
    if (this.topology.needed(slot) === 0) return this.plain.run(call.script, call.keys, call.args);
    const key = this.groupKey(slot);
    let group = this.groups.get(key);
    if (!group) this.groups.set(key, (group = { queue: [], running: false }));
    const queued = group;
    return new Promise((resolve, reject) => {
      queued.queue.push({ call, resolve, reject });
      if (queued.running) return;
      queued.running = true;
      setImmediate(() => void this.drain(key, queued));
    });
  }

  /**
   * Each call's reply or its own error, in order; only the `acknowledged` ones wait for replicas.
   * The others leave in one pipeline, as ScriptRunner.runBatch sends them. The store not
   * answering fails the batch as a whole; a write not confirmed is that write's own error.
   */
  async runBatch(calls: readonly DurableCall[], acknowledged: (call: DurableCall, i: number) => boolean): Promise<unknown[]> {
    const plain: number[] = [];
    const replies: Promise<unknown>[] = calls.map((call, i) => {
      if (acknowledged(call, i)) return this.run(call).catch(ownError);
      plain.push(i);
      return Promise.resolve(undefined);
    });
    const sent = this.plain.runBatch(plain.map((i) => calls[i]!));
    const [answers, ...own] = await Promise.all([sent, ...replies]);
    plain.forEach((i, j) => (own[i] = (answers as unknown[])[j]));
    return own;
  }

  private async drain(key: string, group: Group): Promise<void> {
    while (group.queue.length > 0) {
      const batch = group.queue.splice(0, MAX_BATCH);
      try {
        const replies = await this.send(batch.map((q) => q.call));
        batch.forEach((q, i) => (replies[i] instanceof Error ? q.reject(replies[i]) : q.resolve(replies[i])));
      } catch (err) {
        for (const q of batch) q.reject(err);
      }
    }
    group.running = false;
    if (this.groups.get(key) === group) this.groups.delete(key);
  }

  private send(calls: DurableCall[]): Promise<unknown[]> {
    const first = calls[0]!.keys[0] ?? "";
    const slot = this.connection.isCluster ? keySlot(first) : undefined;
    const confirm: Confirm = { touch: `${first}:ack`, needed: this.topology.needed(slot), primary: this.groupKey(slot) };
    // WAIT, then WAITAOF: each may take up to waitTimeoutMs.
    const waits = this.aof?.waitsFor(confirm.primary) ? 2 : 1;
    return this.connection.call(
      async (client) => {
        const replies = await this.exec(client, calls, confirm, false);
        const missing = calls.flatMap((_, i) => (replies[i] === NOSCRIPT ? [i] : []));
        if (missing.length === 0) return replies;
        // The primary does not know a script (a restart, a failover): loaded with EVAL, confirmed again.
        const again = await this.exec(
          client,
          missing.map((i) => calls[i]!),
          confirm,
          true,
        );
        missing.forEach((i, j) => (replies[i] = again[j]));
        return replies;
      },
      this.callTimeoutMs + waits * this.waitTimeoutMs,
    );
  }

  private async exec(client: Redis | Cluster, calls: DurableCall[], confirm: Confirm, load: boolean): Promise<unknown[]> {
    const { touch, needed, primary } = confirm;
    const waitAof = this.aof?.waitsFor(primary) ?? false;
    const pipeline = client.pipeline();
    for (const call of calls) this.scripts.append(pipeline, call, load);
    pipeline.set(touch, "1", "PX", 1);
    pipeline.wait(needed, this.waitTimeoutMs);
    // The local fsync only: a replica without AOF sends no fsynced offset, so WAITAOF never counts it
    // (replicationSendAck, replicationCountAOFAcksByOffset in
    // https://github.com/redis/redis/blob/4f8cdc2a1ea53e42955af758aabffee67cb455dd/src/replication.c);
    // WAIT counts the replicas.
    if (waitAof) pipeline.call("WAITAOF", 1, 0, this.waitTimeoutMs);
    const replies = (await pipeline.exec()) ?? [];
    // A slot that moved (a failover): the next try goes where the cluster says it is now.
    if (client instanceof Cluster && replies.some(([err]) => err && /^(MOVED|ASK)\b/.test(err.message))) client.refreshSlotsCache();
    const [touchErr] = replies[calls.length] ?? [new Error("no reply to the confirming write")];
    const [waitErr, acknowledged] = replies[calls.length + 1] ?? [new Error("no reply to WAIT")];
    if (touchErr || waitErr) throw toStoreError(touchErr ?? waitErr);
    let unconfirmed: StoreUnconfirmedError | undefined;
    if (Number(acknowledged) < needed) unconfirmed = new StoreUnconfirmedError(Number(acknowledged), needed, this.waitTimeoutMs);
    else if (waitAof && !this.fsynced(primary, replies[calls.length + 2])) unconfirmed = new StoreUnconfirmedError(0, 1, this.waitTimeoutMs, "aof");
    if (unconfirmed) {
      this.topology.refreshSoon();
      return calls.map(() => unconfirmed);
    }
    return calls.map((_, i) => {
      const [err, reply] = replies[i] ?? [new Error("no reply")];
      if (!err) return reply;
      if (isNoScript(err)) return NOSCRIPT;
      const mapped = toStoreError(err);
      if (mapped instanceof StoreUnavailableError) throw mapped;
      return mapped;
    });
  }

  /**
   * WAITAOF's [numlocal, numreplicas]: whether the primary fsynced the write. An error reply (a
   * server or proxy without WAITAOF, its AOF turned off since the last read) leaves WAIT's word
   * as the confirmation, for this primary until the next read; the connection failing is thrown.
   */
  private fsynced(primary: string, reply: [Error | null, unknown] | undefined): boolean {
    const [err, counts] = reply ?? [new Error("no reply to WAITAOF")];
    if (!err) return Array.isArray(counts) && Number(counts[0]) >= 1;
    const mapped = toStoreError(err);
    if (mapped instanceof StoreUnavailableError) throw mapped;
    this.aof?.refused(primary, mapped.message);
    return true;
  }

  /** Writes to one primary share a group: in a Cluster, the node ioredis routes the slot to. */
  private groupKey(slot: number | undefined): string {
    if (slot === undefined) return "";
    return (this.connection.client as Cluster).slots[slot]?.[0] ?? `slot:${slot}`;
  }
}

const NOSCRIPT = Symbol("NOSCRIPT");

interface Confirm {
  /** A key of the first write's slot, written last: WAIT and WAITAOF wait for the connection's last write. */
  touch: string;
  needed: number;
  primary: string;
}

/** In a batch, a write's failure is its own; the store not answering fails the batch. */
function ownError(err: unknown): Error {
  if (err instanceof StoreUnavailableError && !(err instanceof StoreUnconfirmedError)) throw err;
  return err instanceof Error ? err : new Error(String(err));
}
