import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { as, bearerAuth } from "../helpers/auth.js";
import { inProcessGateway, type InProcessGateway } from "../helpers/in-process.js";
import { waitFor } from "../helpers/wait-for.js";

const LEGACY = "2025-11-25";

describe("open SSE streams per principal (in process)", () => {
  let gw: InProcessGateway;
  beforeAll(async () => {
    gw = await inProcessGateway({ auth: bearerAuth("dave"), limits: { maxSseStreamsPerPrincipal: 1 } });
  });
  afterAll(async () => gw?.close());

  const open = (who: string, session: string) =>
    gw.request("/mcp", { headers: { ...as(who), accept: "text/event-stream", "mcp-session-id": session, "mcp-protocol-version": LEGACY } });
  const sessionOf = async (who: string) => {
    const res = await gw.post(
      { jsonrpc: "2.0", id: 0, method: "initialize", params: { protocolVersion: LEGACY, capabilities: {}, clientInfo: { name: "raw", version: "1" } } },
      as(who),
    );
    return res.headers.get("mcp-session-id")!;
  };

  it("refuses a second open stream of a principal with 429 and -32000, and allows it once the first is closed", async () => {
    const [s1, s2] = [await sessionOf("dave"), await sessionOf("dave")];
    const first = await open("dave", s1);
    expect([first.status, first.headers.get("content-type")]).toEqual([200, "text/event-stream"]);
    const second = await open("dave", s2);
    expect(second.status).toBe(429);
    expect(await second.json()).toMatchObject({ error: { code: -32000, message: expect.stringContaining("open streams") } });
    await first.body?.cancel();
    const again = await waitFor(
      async () => {
        const res = await open("dave", s2);
        if (res.status === 200) return res;
        await res.body?.cancel();
        return undefined;
      },
      { what: "the stream slot freed" },
    );
    await again.body?.cancel();
  });
});

describe("a legacy session's GET stream (in process)", () => {
  let gw: InProcessGateway;
  beforeAll(async () => {
    gw = await inProcessGateway();
  });
  afterAll(async () => gw?.close());

  it("is one per session on a replica: a second is 409 until the first closes", async () => {
    const session = await gw.openSession();
    const open = () => gw.request("/mcp", { headers: { accept: "text/event-stream", "mcp-session-id": session, "mcp-protocol-version": LEGACY } });
    const first = await open();
    expect(first.status).toBe(200);
    const conflict = await open();
    expect([conflict.status, ((await conflict.json()) as any).error.code]).toEqual([409, -32600]);
    await first.body?.cancel();
    const again = await waitFor(
      async () => {
        const res = await open();
        if (res.status === 200) return res;
        await res.body?.cancel();
        return undefined;
      },
      { what: "the session's stream slot to be free" },
    );
    await again.body?.cancel();
  });
});
