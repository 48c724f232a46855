import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { as, bearerAuth, legacy, openSessionAs } from "../helpers/auth.js";
import { modern, WITH_TASKS } from "../helpers/modern.js";
import { demoStdio, startGateway, type GatewayProcess } from "../helpers/processes.js";
import { sample, scrape } from "../helpers/prometheus.js";
import { post } from "../helpers/raw.js";
import { waitFor } from "../helpers/wait-for.js";

const OPS = "mcp_server_operation_duration_seconds_count";

/**
 * Issue 17: every front request counted and timed by method, tool, wire and outcome, refusals
 * included with the requests they refused (OpenTelemetry semantic conventions for MCP,
 * mcp.server.operation.duration).
 */
describe("front request metrics on /metrics", () => {
  let gw: GatewayProcess;
  beforeAll(async () => {
    gw = await startGateway({
      http: { maxBodyBytes: 2000 },
      auth: bearerAuth("ana"),
      tasks: { detachAfterMs: 5000 },
      limits: { taskRequestsPerSecond: 0.01, taskRequestBurst: 1 },
      upstreams: [{ name: "demo", path: "/mcp", stdio: demoStdio() }],
    });
  });
  afterAll(async () => gw?.stop());

  const ana = as("ana");
  const call = (name: string, args: Record<string, unknown>, capabilities: Record<string, unknown> = {}) =>
    modern(gw.mcpUrl, "tools/call", { name, arguments: args }, { capabilities, headers: ana });

  it("counts outcomes by method, tool and wire, and refusals before dispatch with them", async () => {
    // Served on the modern wire: ok, a tool error, a JSON-RPC error from the upstream.
    expect((await call("echo", { text: "hi" })).body.result.content[0].text).toBe("hi");
    expect((await call("fail", {})).body.result.isError).toBe(true);
    expect((await call("echo", { wrong: 1 })).body.error.code).toBe(-32602);
    // The same from a browser page on a loopback origin (CORS runs first): counted alike.
    const fromPage = await modern(gw.mcpUrl, "tools/call", { name: "echo", arguments: { wrong: 1 } }, { headers: { ...ana, origin: "http://localhost:6274" } });
    expect(fromPage.body.error.code).toBe(-32602);
    // Streamed (progress turns the reply into SSE): counted when its result is sent.
    expect((await call("sleep", { seconds: 0.2, progressIntervalMs: 50 })).body.result.content[0].text).toBe("Slept 0.2 s");
    // On the legacy wire, in a session.
    const session = await openSessionAs(gw.mcpUrl, ana);
    const listed = await legacy(gw.mcpUrl, { jsonrpc: "2.0", id: 1, method: "tools/list" }, { ...ana, "mcp-session-id": session });
    expect(listed.status).toBe(200);
    await listed.text();
    // Refused: no credentials (401), a body over maxBodyBytes (413), not JSON (400), over the tasks/* rate (429).
    expect((await modern(gw.mcpUrl, "tools/list")).status).toBe(401);
    expect((await call("echo", { text: "x".repeat(3000) })).status).toBe(413);
    expect((await post(gw.mcpUrl, "{not json", ana)).status).toBe(400);
    const get = () => modern(gw.mcpUrl, "tasks/get", { taskId: "01UNKNOWN" }, { capabilities: WITH_TASKS, headers: ana });
    await get();
    expect((await get()).status).toBe(429);

    const text = await waitFor(
      async () => {
        const scraped = await scrape(gw.url);
        return sample(scraped, OPS, { gen_ai_tool_name: "sleep" }) === 1 ? scraped : undefined;
      },
      { what: "the streamed call counted" },
    );
    const count = (labels: Record<string, string>) => sample(text, OPS, { upstream: "demo", ...labels });
    const tool = { mcp_method_name: "tools/call", wire: "modern" };
    expect(count({ ...tool, gen_ai_tool_name: "echo", outcome: "ok", error_type: "" })).toBe(1);
    expect(count({ ...tool, gen_ai_tool_name: "fail", outcome: "tool_error", error_type: "tool_error" })).toBe(1);
    expect(count({ ...tool, gen_ai_tool_name: "echo", outcome: "invalid_params", error_type: "-32602" })).toBe(2);
    expect(count({ ...tool, gen_ai_tool_name: "sleep", outcome: "ok" })).toBe(1);
    expect(count({ mcp_method_name: "initialize", wire: "legacy", outcome: "ok" })).toBe(1);
    expect(count({ mcp_method_name: "notifications/initialized", wire: "legacy", outcome: "ok" })).toBe(1);
    expect(count({ mcp_method_name: "tools/list", wire: "legacy", outcome: "ok", gen_ai_tool_name: "" })).toBe(1);
    // Refused before the body was read: counted under the HTTP method, on the wire the headers name.
    expect(count({ mcp_method_name: "POST", wire: "modern", outcome: "refused_auth", error_type: "-32600" })).toBe(1);
    expect(count({ mcp_method_name: "POST", wire: "modern", outcome: "refused_limit" })).toBe(1);
    expect(count({ mcp_method_name: "POST", outcome: "refused_bad_input", error_type: "-32700" })).toBe(1);
    expect(count({ mcp_method_name: "tasks/get", wire: "modern", outcome: "invalid_params", error_type: "-32602" })).toBe(1);
    expect(count({ mcp_method_name: "tasks/get", wire: "modern", outcome: "refused_limit", error_type: "-32000" })).toBe(1);
    // And nothing else: each of the 13 requests above is counted exactly once.
    expect(sample(text, OPS)).toBe(13);
    expect(sample(text, "mcp_server_operation_duration_seconds_bucket", { gen_ai_tool_name: "sleep", le: "+Inf" })).toBe(1);
  });
});
