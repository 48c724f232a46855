import { randomBytes } from "node:crypto";
import { join } from "node:path";
import { describe, expect, inject, it } from "vitest";
import { useCleanups } from "../helpers/cleanups.js";
import { ROOT, startGateway } from "../helpers/processes.js";
import { messagesOf, openSession, post } from "../helpers/raw.js";
import { waitFor } from "../helpers/wait-for.js";

const ODD = join(ROOT, "test/fixtures/odd-server.mjs");
const upstreams = [{ name: "odd", path: "/mcp", stdio: { command: process.execPath, args: [ODD, "stdio"] } }];

async function subscribe(url: string, session: string, uri: string): Promise<void> {
  const res = await post(url, { jsonrpc: "2.0", id: 1, method: "resources/subscribe", params: { uri } }, { "mcp-session-id": session });
  expect((await messagesOf(res))[0]).toMatchObject({ result: {} });
}

/**
 * What a session holds on a replica ends with it however it ends: its resource subscriptions (the
 * upstream is asked to drop them, and a restart does not restore them) and its standing stream.
 */
describe("subscriptions end with their session", () => {
  const { track } = useCleanups();

  it("when the session expires idle", async () => {
    const gw = track(await startGateway({ sessions: { idleTtlMs: 1_000, cacheMs: 0 }, upstreams }));
    const session = await openSession(gw.mcpUrl);
    await subscribe(gw.mcpUrl, session, "test://idle");
    await waitFor(() => gw.output().includes("resources/subscribe test://idle"), { what: "the upstream to be subscribed" });
    // Nothing more is asked of the session: it expires, and the upstream is told.
    await waitFor(() => gw.output().includes("resources/unsubscribe test://idle"), { timeoutMs: 10_000, what: "the upstream to be unsubscribed" });
    const gone = await post(gw.mcpUrl, { jsonrpc: "2.0", id: 2, method: "ping" }, { "mcp-session-id": session });
    expect(gone.status).toBe(404);
  });

  it("when the session is deleted on another replica", async () => {
    // Idle expiry far away: only the session-ended hint can end it here in time.
    const shared = { store: { redisUrl: inject("redisUrl"), keyPrefix: `t${randomBytes(4).toString("hex")}:` }, upstreams };
    const a = track(await startGateway(shared));
    const b = track(await startGateway(shared));
    const session = await openSession(a.mcpUrl);
    await subscribe(a.mcpUrl, session, "test://deleted");
    // The session's standing stream on replica a, read to its end.
    const standing = await fetch(a.mcpUrl, { headers: { accept: "text/event-stream", "mcp-session-id": session } });
    expect(standing.status).toBe(200);
    let streamEnded = false;
    void (async () => {
      for await (const _ of standing.body as AsyncIterable<Uint8Array>);
    })()
      .catch(() => undefined)
      .finally(() => (streamEnded = true));
    const deleted = await fetch(b.mcpUrl, { method: "DELETE", headers: { "mcp-session-id": session } });
    expect(deleted.status).toBe(200);
    await waitFor(() => a.output().includes("resources/unsubscribe test://deleted"), { timeoutMs: 10_000, what: "replica a to unsubscribe upstream" });
    await waitFor(() => streamEnded, { timeoutMs: 10_000, what: "the session's stream on replica a to end" });
  });
});
