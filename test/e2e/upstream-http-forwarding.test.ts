import { describe, expect, it } from "vitest";
import { HttpConnector } from "../../src/upstream/http/http-connector.js";
import { httpConfig, startFixtureHttp, testLogger, textOf } from "../fixtures/upstreams.js";
import { useCleanups } from "../helpers/cleanups.js";
import { startRecordingProxy } from "../helpers/recording-proxy.js";

const STATIC = "Bearer static-4711";

/**
 * The HTTP transport's side of http.forwardAuthorization, against the real blocking fixture behind
 * a recording proxy: a request sent for a client carries its Authorization on every HTTP request
 * it takes (the resumed stream, the repeat after a lost session), the session's own never do.
 */
describe("Streamable HTTP connector sending a client's Authorization", () => {
  const { defer } = useCleanups();

  async function started() {
    const fixture = await startFixtureHttp();
    defer(() => fixture.stop());
    const proxy = await startRecordingProxy(fixture.url);
    defer(() => proxy.close());
    const connector = new HttpConnector("web", httpConfig(proxy.mcpUrl, { headers: { authorization: STATIC } }), testLogger);
    defer(() => connector.close());
    await connector.start();
    return { fixture, proxy, connector };
  }

  it("resumes a call's response stream with the client's Authorization, not the static one", async () => {
    const { proxy, connector } = await started();
    const params = { name: "resumable", arguments: { steps: 4, delayMs: 30 }, _meta: { progressToken: "r" } };
    const response = await connector.request({ method: "tools/call", params, authorization: "Bearer tok-alice" });
    expect(textOf(response)).toBe("resumed and done after 4 steps");
    expect(proxy.seen.filter((r) => r.method === "tools/call").map((r) => r.authorization)).toEqual(["Bearer tok-alice"]);
    const resumed = proxy.seen.filter((r) => r.httpMethod === "GET" && r.authorization === "Bearer tok-alice");
    expect(resumed.length).toBeGreaterThan(0);
    expect(proxy.seen.filter((r) => r.method === "initialize").map((r) => r.authorization)).toEqual([STATIC]);
  });

  it("repeats a call after the upstream forgot the session with the client's Authorization; the new initialize has the static one", async () => {
    const { fixture, proxy, connector } = await started();
    await fetch(`${fixture.base}/admin/forget-sessions`, { method: "POST" });
    const before = proxy.seen.length;
    const params = { name: "echo", arguments: { message: "again" } };
    expect(textOf(await connector.request({ method: "tools/call", params, authorization: "Bearer tok-bob" }))).toBe("Echo: again");
    const after = proxy.seen.slice(before).filter((r) => r.httpMethod === "POST" && r.method !== undefined);
    // Usually the call meets the 404 and is repeated; the session's GET stream may meet it first.
    const calls = after.filter((r) => r.method === "tools/call").map((r) => r.authorization);
    expect(calls.length === 1 || calls.length === 2).toBe(true);
    expect(new Set(calls)).toEqual(new Set(["Bearer tok-bob"]));
    const handshake = after.filter((r) => r.method !== "tools/call").map((r) => [r.method, r.authorization]);
    expect(handshake).toEqual([
      ["initialize", STATIC],
      ["notifications/initialized", STATIC],
    ]);
  });

  it("sends a request made for nobody in particular with the static header", async () => {
    const { proxy, connector } = await started();
    await connector.request({ method: "tools/list" });
    expect(proxy.seen.filter((r) => r.method === "tools/list").map((r) => r.authorization)).toEqual([STATIC]);
  });
});
