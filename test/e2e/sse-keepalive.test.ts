import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MODERN } from "../helpers/modern.js";
import { demoStdio, startGateway, type GatewayProcess } from "../helpers/processes.js";
import { ACCEPT_BOTH } from "../helpers/raw.js";
import { startTimeoutProxy, type TimeoutProxy } from "../helpers/timeout-proxy.js";

const CALL = { name: "sleep", arguments: { seconds: 6, progressIntervalMs: 60_000 } };

/** A plain (never detached) 2026-07-28 tools/call through the hop: the raw body, or how it was cut. */
async function plainCall(url: string): Promise<{ status: number; type: string; body: string } | "cut"> {
  const meta = { "io.modelcontextprotocol/protocolVersion": MODERN, "io.modelcontextprotocol/clientCapabilities": {} };
  const headers = { "content-type": "application/json", accept: ACCEPT_BOTH, "mcp-protocol-version": MODERN, "mcp-method": "tools/call", "mcp-name": "sleep" };
  const body = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { ...CALL, _meta: meta } });
  try {
    const res = await fetch(url, { method: "POST", headers, body });
    return { status: res.status, type: res.headers.get("content-type") ?? "", body: await res.text() };
  } catch {
    return "cut";
  }
}

// http.sseKeepAliveMs: a plain call still running after it is answered on SSE with
// comment keep-alives, so a hop that cuts idle responses (here after 3 s, like a load
// balancer's idle timeout) lets a call within its maximum duration finish. The progress interval
// is longer than the call, so nothing but keep-alives crosses the hop while it runs.
describe("keep-alives for calls that stay blocking", () => {
  let kept: GatewayProcess;
  let off: GatewayProcess;
  let hops: TimeoutProxy[];
  beforeAll(async () => {
    const config = (sseKeepAliveMs: number) => ({ http: { sseKeepAliveMs }, upstreams: [{ name: "demo", path: "/mcp", stdio: demoStdio() }] });
    [kept, off] = await Promise.all([startGateway(config(500)), startGateway(config(0))]);
    hops = await Promise.all([kept, off].map((g) => startTimeoutProxy(g.url, { idleMs: 3_000 })));
  });
  afterAll(async () => {
    await Promise.all(hops.map((h) => h.close()));
    await Promise.all([kept?.stop(), off?.stop()]);
  });

  it("lets a plain call outlive an idle timeout when keep-alives are on, and not when they are off (0)", async () => {
    const [withKeepAlive, without] = (await Promise.all(hops.map((h) => plainCall(`${h.url}/mcp`)))) as [
      Awaited<ReturnType<typeof plainCall>>,
      Awaited<ReturnType<typeof plainCall>>,
    ];
    expect(withKeepAlive).toMatchObject({ status: 200, type: "text/event-stream" });
    const reply = withKeepAlive as { body: string };
    expect(reply.body).toContain(": keep-alive");
    expect(reply.body).toContain("Slept 6 s");
    expect(hops[0]!.cuts.idle).toBe(0);
    expect(without === "cut" || !without.body.includes("Slept 6 s")).toBe(true);
    expect(hops[1]!.cuts.idle).toBeGreaterThan(0);
  });
});
