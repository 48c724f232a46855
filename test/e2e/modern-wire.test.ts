import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { modern, MODERN, WITH_TASKS } from "../helpers/modern.js";
import { demoStdio, startGateway, type GatewayProcess } from "../helpers/processes.js";

describe("the 2026-07-28 wire on the same path as the legacy one", () => {
  let gw: GatewayProcess;
  beforeAll(async () => {
    gw = await startGateway({ upstreams: [{ name: "demo", path: "/mcp", stdio: demoStdio() }] });
  });
  afterAll(async () => gw?.stop());

  it("answers server/discover with every required field and the tasks extension", async () => {
    const res = await modern(gw.mcpUrl, "server/discover");
    expect(res.status).toBe(200);
    expect(res.body.result).toMatchObject({
      resultType: "complete",
      supportedVersions: [MODERN],
      capabilities: { tools: {}, extensions: { "io.modelcontextprotocol/tasks": {} } },
      ttlMs: expect.any(Number),
      cacheScope: expect.stringMatching(/^(public|private)$/),
    });
    expect(res.body.result.capabilities).not.toHaveProperty("tasks");
    expect(res.headers.get("mcp-session-id")).toBeNull();
  });

  it("relays other methods with resultType and caching hints added", async () => {
    const res = await modern(gw.mcpUrl, "tools/list");
    expect(res.body.result).toMatchObject({ resultType: "complete", ttlMs: 0, cacheScope: "private" });
    expect(res.body.result.tools.map((t: { name: string }) => t.name)).toContain("echo");
  });

  it("validates the routing headers: missing or mismatched → 400 with -32020", async () => {
    for (const headers of [
      { "mcp-protocol-version": undefined },
      { "mcp-protocol-version": "2025-11-25" },
      { "mcp-method": undefined },
      { "mcp-method": "tools/list" },
      { "mcp-name": undefined },
      { "mcp-name": "other" },
    ]) {
      const res = await modern(gw.mcpUrl, "tools/call", { name: "echo", arguments: { text: "x" } }, { headers });
      expect(res.status, JSON.stringify(headers)).toBe(400);
      expect(res.body.error.code).toBe(-32020);
    }
    const encoded = await modern(
      gw.mcpUrl,
      "tools/call",
      { name: "echo", arguments: { text: "x" } },
      { headers: { "mcp-name": `=?base64?${Buffer.from("echo").toString("base64")}?=` } },
    );
    expect(encoded.body.result.resultType).toBe("complete");
    // SEP-2243: the wrapper holds canonical base64 (padding included) of UTF-8, or nothing matches.
    for (const name of ["=?base64?ZWNobw?=", "=?base64?ZW!!obw==?=", "=?base64?/w==?="]) {
      const res = await modern(gw.mcpUrl, "tools/call", { name: "echo", arguments: { text: "x" } }, { headers: { "mcp-name": name } });
      expect([res.status, res.body.error?.code], name).toEqual([400, -32020]);
    }
  });

  it("reports a protocol-version header that disagrees with _meta as -32020 before judging the version", async () => {
    // The conformance suite's server-stateless case: a valid header, an unknown version in _meta.
    const meta = { "io.modelcontextprotocol/protocolVersion": "v999.0.0" };
    const mismatch = await modern(gw.mcpUrl, "server/discover", {}, { meta, id: 302 });
    expect([mismatch.status, mismatch.body.error.code, mismatch.body.id]).toEqual([400, -32020, 302]);
    const unsupported = await modern(gw.mcpUrl, "server/discover", {}, { meta, id: 301, headers: { "mcp-protocol-version": "v999.0.0" } });
    expect([unsupported.status, unsupported.body.error.code]).toEqual([400, -32022]);
    expect(unsupported.body.error.data).toEqual({ supported: [MODERN], requested: "v999.0.0" });
    // Mcp-Method and Mcp-Name are headers too: their mismatch comes before the version as well.
    const method = await modern(gw.mcpUrl, "tools/list", {}, { meta, headers: { "mcp-protocol-version": "v999.0.0", "mcp-method": "prompts/list" } });
    expect([method.status, method.body.error.code]).toEqual([400, -32020]);
  });

  it("answers the methods 2026-07-28 removed, ping among them, with 404 and -32601", async () => {
    for (const method of ["ping", "initialize", "logging/setLevel", "resources/subscribe", "resources/unsubscribe", "tasks/result", "tasks/list"]) {
      const res = await modern(gw.mcpUrl, method, {}, { id: 500 });
      expect([res.status, res.body.error?.code, res.body.id], method).toEqual([404, -32601, 500]);
    }
  });

  it("answers an unsupported version with -32022 and the supported list", async () => {
    const res = await modern(
      gw.mcpUrl,
      "tools/list",
      {},
      { meta: { "io.modelcontextprotocol/protocolVersion": "2099-01-01" }, headers: { "mcp-protocol-version": "2099-01-01" } },
    );
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ code: -32022, data: { supported: [MODERN], requested: "2099-01-01" } });
  });

  it("answers a missing clientCapabilities with -32602 and an unknown method with 404 -32601", async () => {
    const missing = await modern(gw.mcpUrl, "tools/list", {}, { meta: { "io.modelcontextprotocol/clientCapabilities": undefined } });
    expect(missing.status).toBe(400);
    expect(missing.body.error.code).toBe(-32602);
    const unknown = await modern(gw.mcpUrl, "no/such");
    expect(unknown.status).toBe(404);
    expect(unknown.body.error.code).toBe(-32601);
  });

  it("answers GET and DELETE with 405 and mints no session", async () => {
    for (const method of ["GET", "DELETE"]) {
      const res = await fetch(gw.mcpUrl, { method, headers: { "mcp-protocol-version": MODERN, accept: "text/event-stream" } });
      expect(res.status).toBe(405);
    }
    const call = await modern(gw.mcpUrl, "tools/call", { name: "echo", arguments: { text: "x" } }, { capabilities: WITH_TASKS });
    expect(call.headers.get("mcp-session-id")).toBeNull();
  });
});
