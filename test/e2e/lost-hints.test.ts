import { pino } from "pino";
import { describe, expect, it } from "vitest";
import { ConfigSchema } from "../../src/config/schema.js";
import { Relay } from "../../src/upstream/mux/relay.js";
import { Audit } from "../../src/observability/audit.js";
import { Metrics } from "../../src/observability/metrics.js";
import type { EventBus, Store } from "../../src/store/contract.js";
import { MemoryStore } from "../../src/store/memory/memory-store.js";
import { TaskEngine } from "../../src/tasks/engine.js";
import { createConnector, type UpstreamConnector } from "../../src/upstream/index.js";
import { useCleanups } from "../helpers/cleanups.js";
import { DEMO } from "../helpers/processes.js";
import { waitFor } from "../helpers/wait-for.js";

const logger = pino({ level: "silent" });
const upstream = ConfigSchema.parse({ upstreams: [{ name: "demo", stdio: { command: process.execPath, args: [DEMO] } }] }).upstreams[0]!;

/** The real store, seen through a bus that loses every hint routed to an owner: pub/sub at its worst. */
function losingOwnerHints(store: MemoryStore): { store: Store; lost: () => number } {
  let lost = 0;
  const bus: EventBus = {
    publish: async (channel, message) => (channel.startsWith("owner:") ? void lost++ : store.bus.publish(channel, message)),
    subscribe: (channel, handler) => store.bus.subscribe(channel, handler),
  };
  return { store: Object.assign(Object.create(store) as MemoryStore, { bus }), lost: () => lost };
}

describe("routing to the owner when every pub/sub hint is lost", () => {
  const { defer } = useCleanups();

  async function replica(store: Store, replicaId: string) {
    const connector: UpstreamConnector = createConnector(upstream, logger);
    await connector.start();
    const metrics = new Metrics();
    // One process shared by every call (isolation: shared): a question is its lone call's.
    const relay = new Relay(connector, logger, replicaId, metrics, { questions: { transport: "stdio" } });
    const options = { replicaId, leaseMs: 900, cancelGraceMs: 200, statusWriteIntervalMs: 100, reaperIntervalMs: 300, maxAttempts: 1, mrtrTimeoutMs: 60_000 };
    const engine = new TaskEngine({ store, logger, metrics, audit: new Audit(logger), options, clock: Date.now });
    await engine.start();
    defer(async () => (await engine.stop(), await connector.close()));
    return { engine, relay };
  }

  const call = (relay: Relay, name: string, args: Record<string, unknown>, capabilities: Record<string, unknown> = {}) => ({
    caller: relay,
    upstream: "demo",
    client: { sessionId: `s-${Math.random()}`, capabilities },
    principal: "alice",
    taskProtocol: "extension" as const,
    request: { jsonrpc: "2.0" as const, id: 1, method: "tools/call", params: { name, arguments: args } },
    ttlMs: 60_000,
    pollIntervalMs: 100,
  });

  it("delivers a cancel and an answer written on another replica at the owner's next lease renewal", async () => {
    const memory = new MemoryStore();
    defer(() => memory.close());
    const { store, lost } = losingOwnerHints(memory);
    const owner = await replica(store, "owner");
    const other = await replica(store, "other");

    const asking = await owner.engine.detachNow(call(owner.relay, "deploy", { service: "api", seconds: 0 }, { elicitation: { form: {} } }));
    const waiting = await waitFor(
      async () => {
        const t = await other.engine.get(asking.id, "alice");
        return t?.status === "input_required" ? t : undefined;
      },
      { what: "the question" },
    );
    const [key] = Object.keys(waiting.inputRequests);
    await other.engine.answer(asking.id, "alice", { [key!]: { action: "accept", content: { confirm: true } } });
    const answered = await waitFor(
      async () => {
        const t = await other.engine.get(asking.id, "alice");
        return t?.status === "completed" ? t : undefined;
      },
      { what: "the answered task to complete" },
    );
    expect(answered.outcome).toMatchObject({ result: { content: [{ type: "text", text: "Deployed api" }] } });

    const hanging = await owner.engine.detachNow(call(owner.relay, "hang", {}));
    await other.engine.requestCancel(hanging.id, "alice");
    const cancelled = await waitFor(
      async () => {
        const t = await other.engine.get(hanging.id, "alice");
        return t?.status === "cancelled" ? t : undefined;
      },
      { what: "the cancelled task" },
    );
    expect(cancelled.statusMessage).toBe("Cancelled at the client's request");
    // Both went through the store alone: every hint to the owner was dropped.
    expect(lost()).toBe(2);
  });
});
