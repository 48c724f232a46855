import { failure, type JsonRpcErrorObject, type JsonRpcId, type JsonRpcRequest, type JsonRpcResponse } from "../../jsonrpc/message.js";
import type { MessageSink } from "../../jsonrpc/sink.js";
import type { CallClient, CancelOptions } from "../caller.js";
import type { StreamResume } from "../connector.js";
import type { PoolMember, UpstreamPool } from "./upstream-pool.js";
import { listsByProfile, ProfileLimitError, type Profile, type ProfilePools } from "./profiles.js";
import { LeftQueueError, QueueTimeoutError, QueueTtlError, type Bulkhead, type Ticket } from "./bulkhead.js";
import { entryOf, mayStart, queueNotices, type QueueNotices } from "./queued.js";
import { quietKey, Quietness, type LaneProcess, type QuietLane } from "./quiet-lane.js";
import { CANCELLED_BEFORE_START, type CallOptions, type PooledCalls, type Relay } from "./relay.js";
import { frontKey } from "./relay-options.js";
import { RPC } from "../../jsonrpc/codes.js";
import { InFlightMap } from "../../util/in-flight-map.js";

/** How long a list waits for a member of its profile to start before the home session answers it. */
const LIST_WAIT_MS = 5_000;

/** A member within `ms`, else undefined (one that comes later goes straight back); undefined when none can start. */
function takeWithin(pool: UpstreamPool<PooledProcess>, ms: number): Promise<PooledProcess | undefined> {
  return new Promise((resolve) => {
    let late = false;
    const timer = setTimeout(() => {
      late = true;
      resolve(undefined);
    }, ms);
    pool.take().then(
      (member) => {
        clearTimeout(timer);
        if (late) pool.give(member, true);
        else resolve(member);
      },
      () => {
        clearTimeout(timer);
        resolve(undefined);
      },
    );
  });
}

/** A pooled process and the relay that listens to it from its start. */
export interface PooledProcess extends PoolMember {
  readonly relay: Relay;
}

/** A call's place: its ticket in the queue, then its process; a cancel is remembered. */
interface Slot {
  client: CallClient;
  frontId: JsonRpcId;
  ticket: Ticket;
  member?: PooledProcess;
  /** The pool of the caller's profile, once the call took a member of it. */
  pool?: UpstreamPool<PooledProcess>;
  /** Set for a call on the quiet lane: its process is the lane's, shared. */
  lane?: LaneProcess;
  laneOf?: QuietLane;
  cancelled?: boolean;
  /** Handed over with a resumable stream: another replica resumes it in this session, which must outlive the call here. */
  handedOver?: boolean;
  /** The quiet key of its tool, while it waits to run alone: it moves to the lane if the tool shows itself quiet meanwhile. */
  tool?: string;
  /** Taken out of the queue to run on the lane. */
  toLane?: boolean;
}

/** A slot a call already waited for, and the notices that told it its place. */
interface Held {
  ticket: Ticket;
  notices: QueueNotices | undefined;
}

/** What `alone` answers for a call that left its queue for the lane: when it began to wait. */
class ToLane {
  constructor(readonly since: number) {}
}

/** The quiet lanes' bound (`maxInFlight`), one bulkhead for the lanes of every profile. */
export interface SharedQuietCalls {
  readonly bulkhead: Bulkhead;
}

/**
 * `isolation: pool` (the default) and `per-call`: every tools/call, prompts/get and resources/read
 * runs alone on a member of the upstream's pool (a stdio process, an HTTP session), so whatever
 * that member asks belongs to that call (design.md, attribution). At most `poolSize` run at once, the rest wait
 * their turn in the bulkhead's queue. A process whose call ended cleanly (the server answered it,
 * nobody cancelled it) serves the next call; any other is retired: its open questions are answered
 * as cancelled so its handler can unwind, and it is ended after the kill ladder's grace, since its
 * handler may still run and ask. With `shareQuietCalls` (the default), the
 * calls of tools that have shown themselves quiet run together on the quiet lane (quiet-lane.ts).
 */
export class PoolCaller implements PooledCalls {
  private readonly active = new InFlightMap<string, Slot>();
  private readonly quietness = new Quietness();
  /** Calls run on the home connection because the upstream keeps no sessions (HTTP). */
  private readonly atHome = new InFlightMap<string, true>();
  /** The relay over the home connection, where the calls go that the pool does not take. */
  private home: Relay | undefined;

  constructor(
    /** The members, by the profile of the callers they serve (profiles.ts). */
    private readonly pools: ProfilePools,
    private readonly bulkhead: Bulkhead,
    /** Set with `shareQuietCalls` (isolation pool). */
    private readonly shared?: SharedQuietCalls,
    /** HTTP: whether the upstream keeps sessions; one that keeps none runs its calls on the home connection. */
    private readonly keepsSessions?: () => boolean,
    /** isolation pool (members serve call after call); per-call ends each after its call. */
    private readonly reuse = true,
  ) {}

  takesCalls(): boolean {
    return this.keepsSessions?.() ?? true;
  }

  /** The home relay, which hands this pool its calls and runs those the pool does not take. */
  attachHome(relay: Relay): void {
    this.home = relay;
  }

  /**
   * Not an async function: a call whose tool runs on the quiet lane (most of them) gets the lane's
   * own promise, not one more around it. Never throws; rejects only with what an async function
   * would have.
   */
  call(client: CallClient, request: JsonRpcRequest, sink: MessageSink, options: CallOptions = {}): Promise<JsonRpcResponse> {
    try {
      const key = frontKey(client.sessionId, request.id);
      const home = this.home;
      if (home && !this.takesCalls()) return this.atHomeCall(key, () => home.call(client, request, sink, options));
      if (this.active.has(key))
        return Promise.resolve(failure(request.id, { code: RPC.INVALID_REQUEST, message: `request id ${String(request.id)} is already in flight` }));
      let profile: Profile;
      try {
        profile = this.pools.of(client.capabilities);
      } catch (err) {
        if (!(err instanceof ProfileLimitError)) return Promise.resolve(failure(request.id, this.failed(err)));
        // Every profile kept has a member out with a call: this one waits its turn in the queue like
        // any call; when one ends, that member gives way to this call's profile.
        return this.profileTurn(key, client, request, sink, options).then((turn) =>
          "response" in turn ? turn.response : this.onProfile(key, turn.profile, client, request, sink, options, turn.held),
        );
      }
      return this.onProfile(key, profile, client, request, sink, options);
    } catch (err) {
      return Promise.reject(err);
    }
  }

  /** On the quiet lane when its tool has shown itself quiet, else alone on a member of its profile. */
  private onProfile(
    key: string,
    profile: Profile,
    client: CallClient,
    request: JsonRpcRequest,
    sink: MessageSink,
    options: CallOptions,
    held?: Held,
  ): Promise<JsonRpcResponse> {
    const tool = this.shared ? quietKey(request) : undefined;
    // A tool is given a quiet key only where there are lanes (shareQuietCalls): every profile has one then.
    const lane = profile.lane as QuietLane;
    if (tool !== undefined && this.quietness.isQuiet(tool)) {
      held?.ticket.leave();
      return this.onLane(key, tool, lane, client, request, sink, options);
    }
    // Its tool showed itself quiet while the call waited: it runs on the lane, beside the others.
    return this.alone(key, tool, profile.pool, client, request, sink, options, held).then((response) =>
      response instanceof ToLane ? this.onLane(key, tool as string, lane, client, request, sink, options, response.since) : response,
    );
  }

  /**
   * The list of a caller that declared an extension (listsByProfile) on a member of its profile,
   * since a server may list by it (MCP Apps). Not queued behind calls: an idle member, or one
   * started while there is room within poolSize; else undefined, and the home session answers, as
   * it does every other caller's list. `per-call` starts no process for a list.
   */
  async list(client: CallClient, request: JsonRpcRequest, sink: MessageSink, options: CallOptions = {}): Promise<JsonRpcResponse | undefined> {
    if (!this.reuse || !listsByProfile(client.capabilities)) return undefined;
    let pool: UpstreamPool<PooledProcess>;
    try {
      pool = this.pools.of(client.capabilities).pool;
    } catch {
      return undefined;
    }
    const member = pool.takeIdle() ?? (this.pools.bound.makeRoom() ? await takeWithin(pool, LIST_WAIT_MS) : undefined);
    if (!member) return undefined;
    let clean = false;
    try {
      const response = await member.relay.call(client, request, sink, options);
      clean = member.connector.isReady();
      return response;
    } finally {
      pool.give(member, clean);
    }
  }

  /** On a process of its own, which comes back if the call ended cleanly. */
  private async alone(
    key: string,
    tool: string | undefined,
    pool: UpstreamPool<PooledProcess>,
    client: CallClient,
    request: JsonRpcRequest,
    sink: MessageSink,
    options: CallOptions,
    /** Its slot, when it already waited for one (profileTurn). */
    held?: Held,
  ): Promise<JsonRpcResponse | ToLane> {
    const notices = held ? held.notices : options.trackProgress ? queueNotices(sink) : undefined;
    const slot: Slot = { client, frontId: request.id, ticket: held?.ticket ?? this.bulkhead.enter(entryOf(client, options, notices)) };
    if (tool !== undefined && !slot.ticket.started) slot.tool = tool;
    this.active.set(key, slot);
    let clean = false;
    try {
      // A call let in at once goes on in this turn: no promise to wait for, none made.
      if (!slot.ticket.started) await slot.ticket.ready.catch((err: unknown) => (slot.toLane ? undefined : Promise.reject(err)));
      slot.tool = undefined;
      if (slot.toLane) return new ToLane(slot.ticket.since);
      const allowed = mayStart(options);
      if (slot.cancelled || (allowed && !(await allowed))) return failure(request.id, CANCELLED_BEFORE_START);
      // Its profile may have been forgotten while it waited (profiles.ts): its pool is then closed.
      pool = this.pools.currentPool(pool, client.capabilities);
      const member = pool.takeIdle() ?? (await pool.take());
      slot.member = member;
      slot.pool = pool;
      // Cancelled while its process was being taken: it never starts, and the process is untouched.
      if (slot.cancelled) {
        clean = true;
        return failure(request.id, CANCELLED_BEFORE_START);
      }
      notices?.started();
      const { questions } = member.relay;
      const asked = questions.asked;
      const leftRunning = questions.leftRunning;
      const response = await member.relay.call(client, request, sink, options);
      // Not clean when a handler may still run: cancelled, or given up on (a timeout, a failed connection).
      clean = !slot.cancelled && questions.leftRunning === leftRunning && member.connector.isReady();
      if (tool !== undefined && this.quietness.ranAlone(tool, { asked: questions.asked !== asked, quiet: clean && "result" in response }))
        this.moveToLane(tool);
      return response;
    } catch (err) {
      return failure(request.id, this.failed(err));
    } finally {
      this.active.delete(key);
      if (slot.member) this.giveBack(pool, slot.member, clean, slot.handedOver);
      // After the process is back, so the next call in the queue finds it idle.
      slot.ticket.leave();
    }
  }

  /** On the quiet lane, beside the other quiet calls; a question heard meanwhile sends its tool back to runs alone. */
  private async onLane(
    key: string,
    tool: string,
    lane: QuietLane,
    client: CallClient,
    request: JsonRpcRequest,
    sink: MessageSink,
    options: CallOptions,
    /** When it began to wait in the pool's queue, when it moved here from there. */
    since?: number,
  ): Promise<JsonRpcResponse> {
    const { bulkhead } = this.shared as SharedQuietCalls;
    const notices = options.trackProgress ? queueNotices(sink) : undefined;
    const slot: Slot = { client, frontId: request.id, ticket: bulkhead.enter(entryOf(client, options, notices, since)) };
    this.active.set(key, slot);
    try {
      if (!slot.ticket.started) await slot.ticket.ready;
      const allowed = mayStart(options);
      if (slot.cancelled || (allowed && !(await allowed))) return failure(request.id, CANCELLED_BEFORE_START);
      lane = this.pools.currentLane(lane, client.capabilities);
      const taken = lane.enterOpen() ?? (await lane.enter());
      slot.lane = taken;
      slot.laneOf = lane;
      slot.member = taken.member;
      if (slot.cancelled) return failure(request.id, CANCELLED_BEFORE_START);
      notices?.started();
      const { questions } = taken.member.relay;
      const asked = questions.asked;
      const response = await taken.member.relay.call(client, request, sink, options);
      if (questions.asked !== asked) this.quietness.doubt(tool);
      return response;
    } catch (err) {
      return failure(request.id, this.failed(err));
    } finally {
      this.active.delete(key);
      if (slot.lane) lane.leave(slot.lane);
      slot.ticket.leave();
    }
  }

  /**
   * A call whose profile cannot be kept yet (ProfileLimitError: every profile kept has a member out
   * with a call) waits for a slot like any call, bounded as any call is (a task by its TTL); once
   * a call has ended, its member gives way (ProfilePools.of) and this call keeps its slot.
   */
  private async profileTurn(
    key: string,
    client: CallClient,
    request: JsonRpcRequest,
    sink: MessageSink,
    options: CallOptions,
  ): Promise<{ response: JsonRpcResponse } | { profile: Profile; held: Held }> {
    const notices = options.trackProgress ? queueNotices(sink) : undefined;
    const slot: Slot = { client, frontId: request.id, ticket: this.bulkhead.enter(entryOf(client, options, notices)) };
    this.active.set(key, slot);
    try {
      if (!slot.ticket.started) await slot.ticket.ready;
      if (slot.cancelled) throw new LeftQueueError();
      return { profile: this.pools.of(client.capabilities), held: { ticket: slot.ticket, notices } };
    } catch (err) {
      slot.ticket.leave();
      return { response: failure(request.id, this.failed(err)) };
    } finally {
      this.active.delete(key);
    }
  }

  /** A tool just showed itself quiet: its calls still waiting to run alone leave that queue for the lane. */
  private moveToLane(tool: string): void {
    for (const slot of [...this.active.values()]) {
      if (slot.tool !== tool || slot.cancelled) continue;
      slot.toLane = true;
      if (!slot.ticket.withdraw(true)) slot.toLane = false;
    }
  }

  /**
   * The response stream of a call another replica made, resumed in that replica's upstream
   * session (named on each message) from the home connection: the call runs upstream already, on
   * no session of this pool.
   */
  resumeStream(client: CallClient, request: JsonRpcRequest, position: StreamResume, sink: MessageSink, options: CallOptions = {}): Promise<JsonRpcResponse> {
    const home = this.home as Relay;
    return this.atHomeCall(frontKey(client.sessionId, request.id), () => home.resumeStream(client, request, position, sink, options));
  }

  /** On the home connection, as `shared` runs it (its bulkhead is maxInFlight). */
  private async atHomeCall(key: string, run: () => Promise<JsonRpcResponse>): Promise<JsonRpcResponse> {
    this.atHome.set(key, true);
    try {
      return await run();
    } finally {
      this.atHome.delete(key);
    }
  }

  /** Queued: it leaves the queue, the upstream never sees it. Running: cancelled on its own process. */
  async cancel(client: CallClient, frontId: JsonRpcId, reason?: string, options?: CancelOptions): Promise<void> {
    const key = frontKey(client.sessionId, frontId);
    if (this.atHome.has(key)) return this.home?.cancelHere(client, frontId, reason, options);
    const slot = this.active.get(key);
    if (!slot) return;
    slot.cancelled = true;
    if (slot.ticket.withdraw() || !slot.member) return;
    if (options?.keepUpstreamTask && slot.member.relay.isResumable(client, frontId)) {
      slot.handedOver = true;
      if (slot.lane) slot.lane.keepSession = true;
    }
    // The lane takes no more calls: its handler may go on asking, as if it were another call's.
    if (slot.lane) slot.laneOf?.close(slot.lane);
    await slot.member.relay.cancel(client, frontId, reason, options);
  }

  /** Front ids of questions are minted per process, so only the right relay takes the answer. */
  async answer(client: CallClient, response: JsonRpcResponse): Promise<boolean> {
    for (const { member } of [...this.active.values()]) if (member && (await member.relay.answer(client, response))) return true;
    return this.atHome.size > 0 && this.home !== undefined && this.home.questions.answer(client, response);
  }

  async endSession(client: CallClient): Promise<void> {
    const mine = [...this.active.values()].filter((slot) => slot.client.sessionId === client.sessionId);
    await Promise.all(mine.map((slot) => this.cancel(client, slot.frontId, "session ended")));
  }

  /** Calls running or queued right now. */
  get inFlight(): number {
    return this.active.size;
  }

  async close(): Promise<void> {
    for (const profile of this.pools.all()) {
      await profile.pool.close();
      await profile.lane?.closeAll();
    }
    await Promise.allSettled([...this.active.values()].map((slot) => slot.member?.connector.close()));
  }

  private giveBack(pool: UpstreamPool<PooledProcess>, member: PooledProcess, clean: boolean, keepSession = false): void {
    if (!clean) void member.relay.questions.retire();
    pool.give(member, clean, keepSession);
  }

  private failed(err: unknown): JsonRpcErrorObject {
    if (err instanceof LeftQueueError) return CANCELLED_BEFORE_START;
    const message =
      err instanceof QueueTimeoutError || err instanceof QueueTtlError || err instanceof ProfileLimitError
        ? err.message
        : `upstream '${this.pools.first.pool.name}' failed: ${err instanceof Error ? err.message : String(err)}`;
    return { code: RPC.INTERNAL_ERROR, message };
  }
}
