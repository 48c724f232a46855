import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { getTask, modern, WITH_TASKS } from "../helpers/modern.js";
import { startOtlpReceiver, type ReceivedSpan } from "../helpers/otlp-receiver.js";
import { startDemoHttp, startGateway, type GatewayProcess, type RunningProcess } from "../helpers/processes.js";
import { startRecordingProxy } from "../helpers/recording-proxy.js";
import { openSession } from "../helpers/raw.js";
import { waitFor } from "../helpers/wait-for.js";

/** A span's attributes as plain values (OTLP/JSON wraps each in stringValue, intValue, …). */
function attributes(span: ReceivedSpan): Record<string, unknown> {
  return Object.fromEntries(span.attributes.map((a) => [a.key, Object.values(a.value)[0]]));
}

describe("OpenTelemetry tracing across the detach, with traceparent forwarded to an HTTP upstream", () => {
  let receiver: Awaited<ReturnType<typeof startOtlpReceiver>>;
  let demo: RunningProcess & { mcpUrl: string };
  let proxy: Awaited<ReturnType<typeof startRecordingProxy>>;
  let gw: GatewayProcess;

  beforeAll(async () => {
    receiver = await startOtlpReceiver();
    demo = await startDemoHttp();
    proxy = await startRecordingProxy(demo.mcpUrl);
    gw = await startGateway({
      tracing: { otlpEndpoint: receiver.url, serviceName: "taskgate-test" },
      tasks: { detachAfterMs: 200 },
      upstreams: [{ name: "demo", path: "/mcp", http: { url: proxy.mcpUrl } }],
    });
  });
  afterAll(async () => {
    await gw?.stop();
    await proxy?.close();
    await demo?.stop();
    await receiver?.close();
  });

  it("puts the front request, the detached upstream call and the store writes in the caller's trace", async () => {
    const traceId = randomBytes(16).toString("hex");
    const clientSpanId = randomBytes(8).toString("hex");
    const traceparent = `00-${traceId}-${clientSpanId}-01`;
    const created = await modern(
      gw.mcpUrl,
      "tools/call",
      { name: "sleep", arguments: { seconds: 0.8 } },
      { capabilities: WITH_TASKS, headers: { traceparent } },
    );
    expect(created.body.result).toMatchObject({ resultType: "task" });
    const taskId = created.body.result.taskId as string;
    await waitFor(async () => (await getTask(gw.mcpUrl, taskId)).body.result.status === "completed", { timeoutMs: 10_000, what: "the task to complete" });

    const inTrace = (name: string) => receiver.spans.find((s) => s.traceId === traceId && s.name === name);
    const { front, upstream } = await waitFor(
      () => {
        const [front, upstream] = [inTrace("POST /mcp"), inTrace("upstream tools/call")];
        return front && upstream ? { front, upstream } : undefined;
      },
      { timeoutMs: 10_000, what: "the front and upstream spans to be exported" },
    );
    expect(front.parentSpanId).toBe(clientSpanId);
    expect(front.kind).toBe(2); // SERVER
    expect(upstream.parentSpanId).toBe(front.spanId);
    // The front request answered with the task handle before the upstream call ended: the call
    // kept its place in the trace after the detach.
    expect(BigInt(upstream.endTimeUnixNano)).toBeGreaterThan(BigInt(front.endTimeUnixNano));
    await waitFor(() => inTrace("store createTask"), { what: "the store write's span" });

    const sent = proxy.seen.find((r) => r.method === "tools/call");
    expect(sent?.traceparent).toMatch(new RegExp(`^00-${traceId}-${upstream.spanId}-0[01]$`));

    // The front span carries the MCP semantic-convention attributes and the task it created.
    expect(attributes(front)).toMatchObject({ "mcp.method.name": "tools/call", "gen_ai.tool.name": "sleep", "taskgate.task.id": taskId });
    const polled = await waitFor(() => receiver.spans.find((s) => s.name === "POST /mcp" && attributes(s)["mcp.method.name"] === "tasks/get"), {
      what: "a tasks/get span",
    });
    expect(attributes(polled)["taskgate.task.id"]).toBe(taskId);
  });

  it("names the legacy session on the spans of its requests", async () => {
    const sessionId = await openSession(gw.mcpUrl);
    const span = await waitFor(() => receiver.spans.find((s) => attributes(s)["mcp.session.id"] === sessionId), { what: "a span naming the session" });
    expect(attributes(span)["mcp.method.name"]).toBe("notifications/initialized");
  });

  it("sends no trace context upstream when tracing is not configured (the API's no-op)", async () => {
    const plain = await startGateway({ upstreams: [{ name: "demo", path: "/mcp", http: { url: proxy.mcpUrl } }] });
    try {
      const before = proxy.seen.length;
      const traceparent = `00-${randomBytes(16).toString("hex")}-${randomBytes(8).toString("hex")}-01`;
      expect((await modern(plain.mcpUrl, "tools/list", {}, { headers: { traceparent } })).body.result.tools.length).toBeGreaterThan(0);
      const sent = proxy.seen.slice(before).filter((r) => r.method === "tools/list");
      expect(sent).toHaveLength(1);
      expect(sent[0]?.traceparent).toBeUndefined();
    } finally {
      await plain.stop();
    }
  });

  it("starts a new trace for a request without traceparent, and still forwards one upstream", async () => {
    const before = proxy.seen.length;
    expect((await modern(gw.mcpUrl, "tools/list")).body.result.tools.length).toBeGreaterThan(0);
    const sent = proxy.seen.slice(before).find((r) => r.method === "tools/list");
    const traceId = sent?.traceparent?.split("-")[1];
    expect(traceId).toMatch(/^[0-9a-f]{32}$/);
    await waitFor(() => receiver.spans.find((s) => s.traceId === traceId && s.name === "POST /mcp" && !s.parentSpanId), { what: "a root front span" });
  });
});
