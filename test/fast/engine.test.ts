import { pino } from "pino";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { JsonRpcId, JsonRpcRequest, JsonRpcResponse } from "../../src/jsonrpc/message.js";
import type { MessageSink } from "../../src/jsonrpc/sink.js";
import { Audit } from "../../src/observability/audit.js";
import { Metrics } from "../../src/observability/metrics.js";
import { MemoryStore } from "../../src/store/memory/memory-store.js";
import {
  CANCELLED_CODE,
  QUEUED_NOTICE,
  STREAM_NOTICE,
  type CallClient,
  type CallOptions,
  type StreamResume,
  type UpstreamCaller,
} from "../../src/upstream/caller.js";
import { TaskEngine } from "../../src/tasks/engine.js";
import { BatchedWrites } from "../../src/tasks/batched-writes.js";
import { Owner } from "../../src/tasks/owner.js";
import type { EngineOptions, TaskCall } from "../../src/tasks/types.js";
import type { SyncOptions } from "../../src/tasks/sync-call.js";
import { useCleanups } from "../helpers/cleanups.js";

const logger = pino({ level: "silent" });
const OPTIONS: EngineOptions = {
  replicaId: "r1",
  leaseMs: 3_000,
  cancelGraceMs: 1_000,
  statusWriteIntervalMs: 100,
  reaperIntervalMs: 1_000,
  maxAttempts: 1,
  mrtrTimeoutMs: 60_000,
};

/** An upstream whose calls end only when the test says so; it records what the engine asked of it. */
class ScriptedCaller implements UpstreamCaller {
  readonly calls = new Map<JsonRpcId, { sink: MessageSink; end: (r: JsonRpcResponse) => void }>();
  readonly cancels: Array<{ id: JsonRpcId; abandon: boolean }> = [];
  readonly answers: JsonRpcResponse[] = [];

  call(_client: CallClient, request: JsonRpcRequest, sink: MessageSink): Promise<JsonRpcResponse> {
    return new Promise((end) => this.calls.set(request.id, { sink, end }));
  }

  async cancel(_client: CallClient, id: JsonRpcId, _reason?: string, options?: { abandon?: boolean }): Promise<void> {
    const abandon = options?.abandon !== false;
    this.cancels.push({ id, abandon });
    if (abandon) this.calls.get(id)?.end({ jsonrpc: "2.0", id, error: { code: CANCELLED_CODE, message: "abandoned" } });
  }

  async answer(_client: CallClient, response: JsonRpcResponse): Promise<boolean> {
    this.answers.push(response);
    return true;
  }
}

/** An HTTP upstream's caller: it also resumes response streams, recording from where. */
class StreamingCaller extends ScriptedCaller {
  readonly resumed: Array<{ id: JsonRpcId; position: StreamResume }> = [];

  resumeStream(client: CallClient, request: JsonRpcRequest, position: StreamResume, sink: MessageSink): Promise<JsonRpcResponse> {
    this.resumed.push({ id: request.id, position });
    return this.call(client, request, sink);
  }
}

/** The engine on the memory store, both reading the faked clock (vitest fake timers). */
function world(options: Partial<EngineOptions> = {}, store = new MemoryStore({ now: () => Date.now() })) {
  const engine = new TaskEngine({
    store,
    logger,
    metrics: new Metrics(),
    audit: new Audit(logger),
    options: { ...OPTIONS, ...options },
    clock: () => Date.now(),
  });
  return { store, engine };
}

let nextId = 1;
function toolCall(caller: UpstreamCaller, capabilities: Record<string, unknown> = {}): TaskCall {
  const request: JsonRpcRequest = { jsonrpc: "2.0", id: nextId++, method: "tools/call", params: { name: "work", arguments: {} } };
  return {
    caller,
    upstream: "up",
    client: { sessionId: "s", capabilities },
    principal: "alice",
    taskProtocol: "extension",
    request,
    ttlMs: 3_600_000,
    pollIntervalMs: 1_000,
  };
}

describe("the task engine on the memory store, with a fake clock", () => {
  beforeEach(() => {
    vi.useFakeTimers({ now: new Date("2026-01-01T00:00:00Z") });
  });
  afterEach(() => {
    vi.useRealTimers();
  });
  // Registered after the hook above, so it runs first: engines stop while the clock is still fake.
  const { defer } = useCleanups();
  async function started(options: Partial<EngineOptions> = {}, store?: MemoryStore) {
    const w = world(options, store);
    await w.engine.start();
    defer(async () => {
      await w.engine.stop();
      await w.store.close();
    });
    return w;
  }

  it("stores the task before the handle is returned, and the upstream's answer completes it", async () => {
    const { engine, store } = await started();
    const caller = new ScriptedCaller();
    const task = await engine.detachNow(toolCall(caller));
    expect(await store.getTask(task.id, "alice")).toMatchObject({ status: "working", owner: "r1" });
    const [id, running] = [...caller.calls][0]!;
    running.end({ jsonrpc: "2.0", id, result: { content: [{ type: "text", text: "done" }] } });
    await vi.advanceTimersByTimeAsync(0);
    expect(await engine.get(task.id, "alice")).toMatchObject({ status: "completed", outcome: { result: { content: [{ text: "done" }] } } });
  });

  it("fails a task whose outcome JSON cannot write at once, saying so, instead of leaving it to the reaper", async () => {
    const { engine } = await started();
    const caller = new ScriptedCaller();
    const task = await engine.detachNow(toolCall(caller));
    let deep: Record<string, unknown> = {};
    for (let i = 0; i < 10_000; i++) deep = { a: deep };
    const [id, running] = [...caller.calls][0]!;
    running.end({ jsonrpc: "2.0", id, result: { content: [], structuredContent: deep } });
    await vi.advanceTimersByTimeAsync(0);
    const ended = await engine.get(task.id, "alice");
    expect(ended).toMatchObject({ status: "failed", statusMessage: expect.stringContaining("cannot be written as JSON") });
    expect(ended?.statusMessage).not.toMatch(/replica/);
  });

  it("never runs two lease renewals at once, and counts a lease from before its write", async () => {
    const store = new MemoryStore({ now: () => Date.now() });
    let running = 0;
    let most = 0;
    // A store slower than a third of leaseMs: every renewal takes 1.5 intervals, and holds.
    store.renewReplicaLease = async (_token, _leaseMs, first) => {
      if (first) return true;
      most = Math.max(most, ++running);
      await new Promise((r) => setTimeout(r, 1_500));
      running--;
      return true;
    };
    defer(() => store.close());
    const owner = new Owner({
      store,
      logger,
      metrics: new Metrics(),
      audit: new Audit(logger),
      options: OPTIONS,
      clock: () => Date.now(),
      writes: new BatchedWrites(store),
    });
    const started = Date.now();
    await owner.start();
    defer(() => owner.stop());
    // The first renewal leaves at started + 1,000 and is answered at + 2,500; the next leaves at
    // + 3,000 and is answered at + 4,500. Counted from its answer, the first would hold until
    // + 5,500; counted from when it left, until + 4,000.
    await vi.advanceTimersByTimeAsync(started + 3_999 - Date.now());
    expect(owner.holdsLease).toBe(true);
    await vi.advanceTimersByTimeAsync(2);
    expect(owner.holdsLease).toBe(false);
    // The renewal that left at + 13,000 is answered at + 14,500.
    await vi.advanceTimersByTimeAsync(started + 14_501 - Date.now());
    expect(owner.holdsLease).toBe(true);
    expect(most).toBe(1);
  });

  it("keeps one status write of a call waiting while the store is slow, and writes the newest after it", async () => {
    const store = new MemoryStore({ now: () => Date.now() });
    const write = store.transitionTasks.bind(store);
    let waiting = 0;
    let most = 0;
    // A store that takes 2 s for every batch of writes, 20 times the status write interval.
    store.transitionTasks = async (changes) => {
      const statuses = changes.filter((c) => c.change.kind === "set-status-message").length;
      waiting += statuses;
      most = Math.max(most, waiting);
      await new Promise((r) => setTimeout(r, 2_000));
      waiting -= statuses;
      return write(changes);
    };
    const { engine } = await started({ statusWriteIntervalMs: 100 }, store);
    const caller = new ScriptedCaller();
    const task = await engine.detachNow(toolCall(caller));
    const [, running] = [...caller.calls][0]!;
    for (let i = 1; i <= 50; i++) {
      running.sink.send({ jsonrpc: "2.0", method: "notifications/progress", params: { progressToken: "p", progress: i, total: 50 } });
      await vi.advanceTimersByTimeAsync(100);
    }
    await vi.advanceTimersByTimeAsync(5_000);
    expect(most).toBe(1);
    expect((await store.getTask(task.id, null))?.statusMessage).toBe("Progress 50/50");
  });

  it("cancels cooperatively first, and abandons the call after cancelGraceMs", async () => {
    const { engine } = await started();
    const caller = new ScriptedCaller();
    const task = await engine.detachNow(toolCall(caller));
    await engine.requestCancel(task.id, "alice");
    await vi.advanceTimersByTimeAsync(0);
    expect(caller.cancels).toEqual([{ id: expect.anything(), abandon: false }]);
    await vi.advanceTimersByTimeAsync(OPTIONS.cancelGraceMs - 1);
    expect((await engine.get(task.id, "alice"))?.status).toBe("working");
    await vi.advanceTimersByTimeAsync(1);
    expect(caller.cancels.map((c) => c.abandon)).toEqual([false, true]);
    expect((await engine.get(task.id, "alice"))?.status).toBe("cancelled");
  });

  it("fails a task whose question is not answered within inputTimeoutMs, naming the setting", async () => {
    const { engine } = await started({ inputTimeoutMs: 5_000 });
    const caller = new ScriptedCaller();
    const task = await engine.detachNow(toolCall(caller, { elicitation: { form: {} } }));
    const [, running] = [...caller.calls][0]!;
    running.sink.send({
      jsonrpc: "2.0",
      id: "q1",
      method: "elicitation/create",
      params: { message: "sure?", requestedSchema: { type: "object", properties: {} } },
    });
    await vi.advanceTimersByTimeAsync(0);
    expect((await engine.get(task.id, "alice"))?.status).toBe("input_required");
    await vi.advanceTimersByTimeAsync(5_000 + OPTIONS.cancelGraceMs);
    const failed = await engine.get(task.id, "alice");
    expect(failed).toMatchObject({ status: "failed", outcome: { error: { message: expect.stringContaining("tasks.inputTimeoutMs") } } });
  });

  it("passes a client's answer to the upstream's pending question, and the task works on", async () => {
    const { engine } = await started();
    const caller = new ScriptedCaller();
    const task = await engine.detachNow(toolCall(caller, { elicitation: { form: {} } }));
    const [, running] = [...caller.calls][0]!;
    running.sink.send({
      jsonrpc: "2.0",
      id: "q1",
      method: "elicitation/create",
      params: { message: "sure?", requestedSchema: { type: "object", properties: {} } },
    });
    await vi.advanceTimersByTimeAsync(0);
    const asked = await engine.get(task.id, "alice");
    const key = Object.keys(asked?.inputRequests ?? {})[0]!;
    await engine.answer(task.id, "alice", { [key]: { action: "accept", content: {} } });
    await vi.advanceTimersByTimeAsync(0);
    expect(caller.answers).toEqual([{ jsonrpc: "2.0", id: "q1", result: { action: "accept", content: {} } }]);
    expect((await engine.get(task.id, "alice"))?.status).toBe("working");
  });

  it("lets the reaper of a live replica fail a task whose owner stopped renewing its lease", async () => {
    const store = new MemoryStore({ now: () => Date.now() });
    const owner = world({ replicaId: "gone" }, store).engine;
    // The owner made the task and then stopped renewing its lease (a replica that died holding it).
    await owner.start();
    const task = await owner.detachNow(toolCall(new ScriptedCaller()));
    await owner.stop();
    const { engine } = await started({ replicaId: "alive" }, store);
    await vi.advanceTimersByTimeAsync(OPTIONS.leaseMs - 1);
    expect((await engine.get(task.id, "alice"))?.status).toBe("working");
    await vi.advanceTimersByTimeAsync(OPTIONS.reaperIntervalMs + 1);
    expect(await engine.get(task.id, "alice")).toMatchObject({ status: "failed", statusMessage: expect.stringContaining("stopped") });
  });

  it("resumes on a live replica the response stream of a stopped owner's call that said where, and fails one that did not", async () => {
    const store = new MemoryStore({ now: () => Date.now() });
    const gone = new StreamingCaller();
    const owner = world({ replicaId: "gone" }, store).engine;
    await owner.start();
    const resumable = await owner.detachNow(toolCall(gone));
    const plain = await owner.detachNow(toolCall(gone));
    const [first] = [...gone.calls.values()];
    // The first call's stream gave event ids; told twice, the position is written once, the first.
    first!.sink.send({ jsonrpc: "2.0", method: STREAM_NOTICE, params: { requestId: 7, lastEventId: "s_1", session: "S" } });
    first!.sink.send({ jsonrpc: "2.0", method: STREAM_NOTICE, params: { requestId: 7, lastEventId: "s_2", session: "S" } });
    await vi.advanceTimersByTimeAsync(0);
    expect(await store.getTask(resumable.id, null)).toMatchObject({ upstreamRequestId: "7", lastEventId: "s_1", upstreamSession: "S", revision: 2 });
    // The owner stops renewing its lease: it died holding both calls.
    await owner.stop();
    const caller = new StreamingCaller();
    const { engine } = await started({ replicaId: "alive" }, store);
    engine.addUpstream("up", { caller, retryOnOwnerLoss: () => undefined });
    await vi.advanceTimersByTimeAsync(OPTIONS.leaseMs + OPTIONS.reaperIntervalMs + 1);
    expect(caller.resumed).toEqual([{ id: expect.anything(), position: { requestId: 7, lastEventId: "s_1", session: "S" } }]);
    expect(caller.calls.size).toBe(1);
    expect(await engine.get(resumable.id, "alice")).toMatchObject({
      status: "working",
      owner: "alive",
      statusMessage: expect.stringMatching(/resumed its response stream/),
    });
    expect(await engine.get(plain.id, "alice")).toMatchObject({ status: "failed", statusMessage: expect.stringContaining("stopped") });
    const [id, running] = [...caller.calls][0]!;
    running.end({ jsonrpc: "2.0", id, result: { content: [{ type: "text", text: "the upstream's own" }] } });
    await vi.advanceTimersByTimeAsync(0);
    expect(await engine.get(resumable.id, "alice")).toMatchObject({ status: "completed", outcome: { result: { content: [{ text: "the upstream's own" }] } } });
  });

  it("marks a queued task in the store with its params, marks it started before it runs, and bounds the run, not the wait, by maxDurationMs", async () => {
    const { engine, store } = await started();
    /** An upstream whose calls first wait in a queue (2 ahead), as the bulkhead tells them. */
    class QueuedCaller extends ScriptedCaller {
      options?: CallOptions;
      override call(client: CallClient, request: JsonRpcRequest, sink: MessageSink, options?: CallOptions): Promise<JsonRpcResponse> {
        this.options = options;
        sink.send({ jsonrpc: "2.0", method: QUEUED_NOTICE, params: { ahead: 2 } });
        return super.call(client, request, sink);
      }
    }
    const caller = new QueuedCaller();
    const task = await engine.detachNow({ ...toolCall(caller), maxDurationMs: 1_000 });
    await vi.advanceTimersByTimeAsync(0);
    expect(await store.getTask(task.id, "alice")).toMatchObject({
      queued: true,
      requestParams: { name: "work", arguments: {} },
      statusMessage: "queued: 2 ahead",
    });
    // The wait is not the run: maxDurationMs does not count it.
    await vi.advanceTimersByTimeAsync(5_000);
    expect((await store.getTask(task.id, "alice"))?.status).toBe("working");
    expect(caller.cancels).toEqual([]);
    // Its slot: the store hears it started before anything goes upstream, and the params go.
    const start = caller.options?.queueWait?.beforeStart;
    expect(start).toBeDefined();
    expect(await start?.()).toBe(true);
    const marked = await store.getTask(task.id, "alice");
    expect(marked).not.toHaveProperty("queued");
    expect(marked).not.toHaveProperty("requestParams");
    const [id, running] = [...caller.calls][0]!;
    running.sink.send({ jsonrpc: "2.0", method: QUEUED_NOTICE, params: { ahead: null } });
    await vi.advanceTimersByTimeAsync(1_000);
    expect(caller.cancels.map((c) => c.id)).toEqual([id]);
    expect(await engine.get(task.id, "alice")).toMatchObject({ status: "failed", statusMessage: "the call ran longer than its maxDurationMs (1000 ms)" });
  });

  it("asks the upstream for progress in the synchronous round only where the call may become a task", async () => {
    const { engine } = await started();
    const seen: CallOptions[] = [];
    const caller: UpstreamCaller = {
      call: async (_client, request, _sink, options = {}) => (seen.push(options), { jsonrpc: "2.0", id: request.id, result: {} }),
      cancel: async () => undefined,
      answer: async () => false,
    };
    const run = async (sync: SyncOptions) => {
      const outcome = await engine.sync.start(toolCall(caller), { method: "tools/call", name: "work" }, { send: () => false }, sync);
      expect(outcome).toHaveProperty("inline");
      return seen.at(-1);
    };
    expect(await run({})).toMatchObject({ trackProgress: true, askProgress: false });
    expect(await run({ detachAfterMs: 5_000 })).toMatchObject({ trackProgress: true, askProgress: true });
    expect(await run({ detachOnInput: true })).toMatchObject({ trackProgress: true, askProgress: true });
  });
});
