import { describe, expect, it } from "vitest";
import { LimitsSchema } from "../../src/config/security-schema.js";
import { CallerLimits } from "../../src/http/caller-limits.js";
import { GatewayError } from "../../src/wire/errors.js";
import { Audit } from "../../src/observability/audit.js";
import { silentLogger } from "../../src/observability/logger.js";

const audit = new Audit(silentLogger);
const sse = () =>
  new Response(new ReadableStream({ start: (c) => c.enqueue(new TextEncoder().encode(": hi\n\n")) }), { headers: { "content-type": "text/event-stream" } });

describe("per-caller limits", () => {
  it("lets a caller make taskRequestBurst tasks/* requests, then answers 429 with Retry-After until the bucket refills", async () => {
    let now = 1_000_000;
    const limits = new CallerLimits(LimitsSchema.parse({ taskRequestsPerSecond: 2, taskRequestBurst: 3 }), audit, () => now);
    for (let i = 0; i < 3; i++) expect(limits.rate("alice", "tasks/get")).toBeUndefined();
    const refused = limits.rate("alice", "tasks/get");
    expect(refused?.status).toBe(429);
    expect(refused?.headers.get("retry-after")).toBe("1");
    expect(await refused?.json()).toMatchObject({ jsonrpc: "2.0", error: { code: -32000 } });
    expect(limits.rate("bob", "tasks/get")).toBeUndefined();
    expect(limits.rate("alice", "tools/list")).toBeUndefined();
    now += 500;
    expect(limits.rate("alice", "tasks/get")).toBeUndefined();
    expect(limits.rate("alice", "tasks/get")?.status).toBe(429);
  });

  it("keeps buckets for the callers seen last only, dropping the least recently used, and still limits a busy caller", () => {
    const now = 1_000_000;
    const limits = new CallerLimits(LimitsSchema.parse({ taskRequestsPerSecond: 1, taskRequestBurst: 2 }), audit, () => now, 100);
    limits.rate("busy", "tasks/get");
    limits.rate("busy", "tasks/get");
    // 10 times the bound of callers that each spend part of their bucket: none is full, so none
    // could be dropped as idle; the oldest go instead, and the count never passes the bound.
    for (let i = 0; i < 1_000; i++) {
      limits.rate(`caller-${i}`, "tasks/get");
      if (i % 50 === 0) expect(limits.rate("busy", "tasks/get")?.status).toBe(429);
      expect(limits.bucketCount).toBeLessThanOrEqual(100);
    }
    expect(limits.bucketCount).toBe(100);
  });

  it("counts open SSE streams until they end or the client goes away, and refuses past the limit", async () => {
    const limits = new CallerLimits(LimitsSchema.parse({ maxSseStreamsPerPrincipal: 2 }), audit);
    const a = limits.track("alice", sse());
    const b = limits.track("alice", sse());
    limits.track("alice", Response.json({}));
    expect(limits.openStreams("alice")).toBe(2);
    expect(() => limits.checkStreams("alice")).toThrow(GatewayError);
    limits.checkStreams("bob");
    await a.body!.cancel();
    expect(limits.openStreams("alice")).toBe(1);
    limits.checkStreams("alice");
    const reader = b.body!.getReader();
    await reader.read();
    await reader.cancel();
    expect(limits.openStreams("alice")).toBe(0);
  });
});
