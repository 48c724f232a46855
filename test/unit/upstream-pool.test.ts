import { pino } from "pino";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { UpstreamConnector } from "../../src/upstream/connector.js";
import { STALL_MS } from "../../src/upstream/mux/pool-growth.js";
import { UpstreamPool, type PoolMember } from "../../src/upstream/mux/upstream-pool.js";

/** A connector whose start the test settles: how many are starting is what the pool decided. */
class HeldConnector {
  readonly name = "held";
  ready = false;
  private settle: (() => void) | undefined;
  readonly started = new Promise<void>((resolve) => (this.settle = resolve));
  start = () => this.started.then(() => void (this.ready = true));
  finish = () => this.settle?.();
  isReady = () => this.ready;
  request = async () => ({ jsonrpc: "2.0" as const, id: 0, result: {} });
  close = async () => undefined;
}

function poolOf(startsTogether: boolean, size: number) {
  const connectors: HeldConnector[] = [];
  const source = {
    connect: () => {
      const connector = new HeldConnector();
      connectors.push(connector);
      return connector as unknown as UpstreamConnector;
    },
    unit: startsTogether ? ("session" as const) : ("process" as const),
    startsTogether,
    retryInitialMs: 10,
    retryMaxMs: 10,
  };
  const pool = new UpstreamPool<PoolMember>("u", source, { size, warm: 0, reuse: true }, pino({ level: "silent" }), (connector) => ({ connector }));
  return { pool, connectors };
}

describe("how an upstream pool grows for calls that wait", () => {
  afterEach(() => void vi.useRealTimers());

  it("starts one session per stalled call at once (HTTP), up to the pool's size", async () => {
    vi.useFakeTimers();
    const { pool, connectors } = poolOf(true, 4);
    const taken = Array.from({ length: 6 }, () => pool.take());
    for (const t of taken) t.catch(() => undefined);
    await vi.advanceTimersByTimeAsync(STALL_MS + 1);
    expect(connectors).toHaveLength(4);
    for (const c of connectors) c.finish();
    await vi.advanceTimersByTimeAsync(1);
    expect(pool.counts()).toMatchObject({ busy: 4, starting: 0 });
    await pool.close();
  });

  it("starts processes one at a time (stdio), whatever waits", async () => {
    vi.useFakeTimers();
    const { pool, connectors } = poolOf(false, 4);
    const taken = Array.from({ length: 6 }, () => pool.take());
    for (const t of taken) t.catch(() => undefined);
    await vi.advanceTimersByTimeAsync(STALL_MS * 5);
    expect(connectors).toHaveLength(1);
    connectors[0]!.finish();
    await vi.advanceTimersByTimeAsync(STALL_MS + 1);
    expect(connectors).toHaveLength(2);
    await pool.close();
  });
});
