import { describe, expect, it } from "vitest";
import type { JsonRpcId } from "../../src/jsonrpc/message.js";
import { UpstreamError } from "../../src/upstream/connector.js";
import { PendingRequests } from "../../src/upstream/pending.js";

describe("PendingRequests", () => {
  it("numbers ids from 1 and never reuses one", () => {
    const pending = new PendingRequests("u");
    expect([pending.allocate(), pending.allocate(), pending.allocate()]).toEqual([1, 2, 3]);
  });

  it("resolves the waiter of the matching id and releases it", async () => {
    const released: JsonRpcId[] = [];
    const pending = new PendingRequests("u", (id) => released.push(id));
    const waiting = pending.wait(7, { method: "tools/call" });
    expect(pending.settle({ jsonrpc: "2.0", id: 7, result: { ok: true } })).toBe(true);
    await expect(waiting).resolves.toMatchObject({ result: { ok: true } });
    expect(pending.has(7)).toBe(false);
    expect(released).toEqual([7]);
    expect(pending.settle({ jsonrpc: "2.0", id: 7, result: {} })).toBe(false);
  });

  it("on abort stops waiting with UpstreamError 'closed' carrying the caller's reason", async () => {
    const pending = new PendingRequests("u");
    const controller = new AbortController();
    const waiting = pending.wait(1, { method: "tools/call", signal: controller.signal });
    const reason = new Error("client left");
    controller.abort(reason);
    const err = await waiting.catch((e: unknown) => e);
    expect(err).toBeInstanceOf(UpstreamError);
    expect(err).toMatchObject({ reason: "closed", cause: reason });
    expect(pending.has(1)).toBe(false);
  });

  it("rejects at once when the signal is already aborted", async () => {
    const pending = new PendingRequests("u");
    await expect(pending.wait(1, { method: "m", signal: AbortSignal.abort() })).rejects.toMatchObject({ reason: "closed" });
  });

  it("stops waiting through the function handed to stopWaiting, once, like an abort", async () => {
    const released: JsonRpcId[] = [];
    const pending = new PendingRequests("u", (id) => released.push(id));
    let stop: ((reason?: unknown) => void) | undefined;
    const waiting = pending.wait(4, { method: "tools/call", stopWaiting: (s) => (stop = s) });
    expect(pending.has(4)).toBe(true);
    const reason = new Error("task cancelled");
    stop!(reason);
    stop!(reason);
    await expect(waiting).rejects.toMatchObject({ reason: "closed", cause: reason });
    expect(pending.has(4)).toBe(false);
    expect(released).toEqual([4]);
    expect(pending.settle({ jsonrpc: "2.0", id: 4, result: {} })).toBe(false);
  });

  it("a stop after the answer changes nothing", async () => {
    const released: JsonRpcId[] = [];
    const pending = new PendingRequests("u", (id) => released.push(id));
    let stop: ((reason?: unknown) => void) | undefined;
    const waiting = pending.wait(5, { method: "tools/call", stopWaiting: (s) => (stop = s) });
    pending.settle({ jsonrpc: "2.0", id: 5, result: { ok: true } });
    stop!();
    await expect(waiting).resolves.toMatchObject({ result: { ok: true } });
    expect(released).toEqual([5]);
  });

  it("times out with 'timeout' and tells the caller so it can cancel upstream", async () => {
    const pending = new PendingRequests("u");
    let timedOut = false;
    const waiting = pending.wait(3, { method: "tools/call", timeoutMs: 20, onTimeout: () => (timedOut = true) });
    await expect(waiting).rejects.toMatchObject({ reason: "timeout", message: "upstream 'u' did not answer tools/call (id 3) within 20 ms" });
    expect(timedOut).toBe(true);
  });

  it("fails every waiter with the same error", async () => {
    const pending = new PendingRequests("u");
    const waits = [pending.wait(1, { method: "a" }), pending.wait(2, { method: "b" })];
    const error = new UpstreamError("upstream process exited (code 1, signal null)", "exited");
    pending.failAll(error);
    for (const w of waits) await expect(w).rejects.toBe(error);
  });
});
