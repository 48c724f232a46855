import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openListen } from "../helpers/listen.js";
import { modern, WITH_TASKS } from "../helpers/modern.js";
import { demoStdio, startGateway, type GatewayProcess } from "../helpers/processes.js";

const SUBSCRIPTION = "io.modelcontextprotocol/subscriptionId";
const b64 = (text: string) => `=?base64?${Buffer.from(text, "utf8").toString("base64")}?=`;

describe("SEP-2243 Mcp-Param-* headers for a tool whose schema marks an argument x-mcp-header", () => {
  let gw: GatewayProcess;
  beforeAll(async () => {
    gw = await startGateway({ tasks: { detachAfterMs: 2_000 }, upstreams: [{ name: "demo", path: "/mcp", stdio: demoStdio() }] });
  });
  afterAll(async () => gw?.stop());

  const routed = (region: unknown, headers: Record<string, string | undefined>, capabilities = {}) =>
    modern(gw.mcpUrl, "tools/call", { name: "routed", arguments: { region, text: "hi" } }, { headers, capabilities });

  it("shows the declaration in tools/list as the upstream wrote it", async () => {
    const tools = (await modern(gw.mcpUrl, "tools/list")).body.result.tools as any[];
    expect(tools.find((t) => t.name === "routed").inputSchema.properties.region["x-mcp-header"]).toBe("Region");
  });

  it("serves a call whose header equals the argument, plain or base64-encoded", async () => {
    for (const [region, header] of [
      ["eu-west", "eu-west"],
      ["eu-west", b64("eu-west")],
      ["Zürich", b64("Zürich")],
      [" padded ", b64(" padded ")],
      ["SGVsbG8=", "SGVsbG8="],
      ["=?base64?SGVsbG8", "=?base64?SGVsbG8"],
    ]) {
      const res = await routed(region, { "mcp-param-region": header });
      expect([res.status, res.body.result?.content?.[0]?.text], `${region} / ${header}`).toEqual([200, `hi (routed to ${region})`]);
    }
  });

  it("refuses a missing, mismatched or malformed header with 400 and -32020, tasks included", async () => {
    const cases: Array<[unknown, string | undefined, RegExp]> = [
      ["eu-west", undefined, /Mcp-Param-Region is required/],
      ["eu-west", "us-east", /Mcp-Param-Region must equal arguments\.region/],
      ["eu-west", "EU-WEST", /must equal/],
      ["Hello", "=?base64?SGVsbG8?=", /not valid/], // padding missing
      ["Hello", "=?base64?SGVs!!!bG8=?=", /not valid/],
      ["eu-west", b64("eu-east"), /must equal/],
    ];
    for (const [region, header, message] of cases) {
      for (const capabilities of [{}, WITH_TASKS]) {
        const res = await routed(region, { "mcp-param-region": header }, capabilities);
        expect([res.status, res.body.error?.code], `${region} / ${header}`).toEqual([400, -32020]);
        expect(res.body.error.message).toMatch(message);
      }
    }
  });

  it("expects no header for an absent argument, and none for tools that declare nothing", async () => {
    const absent = await modern(gw.mcpUrl, "tools/call", { name: "routed", arguments: { text: "hi" } });
    expect(absent.status).toBe(200); // the upstream's own answer: region is required by its schema
    expect(absent.body.error?.code).not.toBe(-32020);
    const echo = await modern(gw.mcpUrl, "tools/call", { name: "echo", arguments: { text: "x" } }, { headers: { "mcp-param-region": "anything" } });
    expect(echo.body.result.content[0].text).toBe("x");
  });
});

describe.each(["shared", "per-call"])("list-changed notifications on subscriptions/listen (isolation: %s)", (isolation) => {
  let gw: GatewayProcess;
  beforeAll(async () => {
    gw = await startGateway({ upstreams: [{ name: "demo", path: "/mcp", stdio: demoStdio(), isolation }] });
  });
  afterAll(async () => gw?.stop());

  it("acknowledges the lists asked for and delivers only those, tagged with the subscription id", async () => {
    const tools = await openListen(gw.mcpUrl, "tools-sub", { toolsListChanged: true }, {});
    const prompts = await openListen(gw.mcpUrl, 42, { promptsListChanged: true, resourcesListChanged: true }, {});
    try {
      const ackTools = await tools.next((m) => m.method === "notifications/subscriptions/acknowledged", "the tools acknowledgement");
      expect(ackTools.params).toEqual({ _meta: { [SUBSCRIPTION]: "tools-sub" }, notifications: { toolsListChanged: true } });
      const ackPrompts = await prompts.next((m) => m.method === "notifications/subscriptions/acknowledged", "the prompts acknowledgement");
      expect(ackPrompts.params.notifications).toEqual({ promptsListChanged: true, resourcesListChanged: true });

      await modern(gw.mcpUrl, "tools/call", { name: "change-lists", arguments: { lists: ["tools"] } });
      const changed = await tools.next((m) => m.method === "notifications/tools/list_changed", "tools/list_changed on the tools stream");
      expect(changed.params).toEqual({ _meta: { [SUBSCRIPTION]: "tools-sub" } });

      // The upstream's notifications arrive in order: once the prompts one is here, a tools one would have been too.
      await modern(gw.mcpUrl, "tools/call", { name: "change-lists", arguments: { lists: ["prompts", "resources"] } });
      await prompts.next((m) => m.method === "notifications/resources/list_changed", "resources/list_changed on the prompts stream");
      expect(prompts.messages.map((m) => m.method)).toEqual([
        "notifications/subscriptions/acknowledged",
        "notifications/prompts/list_changed",
        "notifications/resources/list_changed",
      ]);
      expect(prompts.messages.every((m) => m.params._meta[SUBSCRIPTION] === 42)).toBe(true);
      // And on the tools stream, a second tools change comes right after the first: nothing between.
      await modern(gw.mcpUrl, "tools/call", { name: "change-lists", arguments: { lists: ["tools"] } });
      await tools.next((m) => m.method === "notifications/tools/list_changed", "the second tools/list_changed", 2);
      expect(tools.messages.map((m) => m.method)).toEqual([
        "notifications/subscriptions/acknowledged",
        "notifications/tools/list_changed",
        "notifications/tools/list_changed",
      ]);
    } finally {
      tools.close();
      prompts.close();
    }
  });

  it("refuses a filter that is not a boolean with -32602", async () => {
    const res = await openListen(gw.mcpUrl, 5, { toolsListChanged: "yes" }, {});
    expect(res.messages[0]).toMatchObject({ id: 5, error: { code: -32602, message: expect.stringContaining("toolsListChanged") } });
  });
});
