import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { admin, ADMIN_TOKEN } from "../helpers/admin.js";
import { getTask, modern, WITH_TASKS } from "../helpers/modern.js";
import { freePort } from "../helpers/ports.js";
import { demoStdio, startGateway, type GatewayProcess } from "../helpers/processes.js";
import { sample, scrape } from "../helpers/prometheus.js";

const ELICIT = { ...WITH_TASKS, elicitation: { form: {} } };
const SECRET = randomBytes(32).toString("hex");
const GREET = { name: "confirm-greeting", arguments: { name: "Ada" } };
const ASK = { uri: "demo://ask/weather" };

function parkIdOf(state: string): string {
  return JSON.parse(Buffer.from(state.split(".")[0]!, "base64url").toString("utf8")).p as string;
}

/** The one open question of a round, and the round's requestState. */
function roundOf(result: any): { key: string; request: any; requestState: string } {
  expect(result.resultType).toBe("input_required");
  const entries = Object.entries(result.inputRequests);
  expect(entries).toHaveLength(1);
  const [key, request] = entries[0]!;
  expect(typeof result.requestState).toBe("string");
  return { key, request, requestState: result.requestState };
}

describe("MRTR rounds of prompts/get and resources/read (2026-07-28, https://modelcontextprotocol.io/specification/2026-07-28/basic/patterns/mrtr)", () => {
  let a: GatewayProcess;
  let b: GatewayProcess;
  let adminA: string;
  beforeAll(async () => {
    const store = { redisUrl: inject("redisUrl"), keyPrefix: `t${randomBytes(4).toString("hex")}:` };
    const config = { store, tasks: { detachAfterMs: 300, requestStateSecret: SECRET }, upstreams: [{ name: "demo", path: "/mcp", stdio: demoStdio() }] };
    const port = await freePort();
    adminA = `http://127.0.0.1:${port}`;
    [a, b] = await Promise.all([startGateway({ ...config, admin: { port } }, { TASKGATE_ADMIN_TOKEN: ADMIN_TOKEN }), startGateway(config)]);
  });
  afterAll(async () => Promise.all([a?.stop(), b?.stop()]));

  it("asks during prompts/get on one process and answers the retry on another with the prompt", async () => {
    const first = await modern(a.mcpUrl, "prompts/get", GREET, { capabilities: ELICIT });
    const round = roundOf(first.body.result);
    expect(round.request).toMatchObject({ method: "elicitation/create", params: { message: "Greet Ada?" } });

    // Looked at while parked, checked after the retry (which frees the shared upstream whatever they say).
    const lookup = await getTask(b.mcpUrl, parkIdOf(round.requestState));
    const listed = await admin(adminA, "/api/tasks");
    const metrics = await scrape(a.url);

    const retry = { ...GREET, inputResponses: { [round.key]: { action: "accept", content: { confirm: true } } }, requestState: round.requestState };
    const second = await modern(b.mcpUrl, "prompts/get", retry, { capabilities: ELICIT });
    // Parked, the call is no task anywhere: not for tasks/get, not in the operator's list, not in the metrics.
    expect(lookup.body.error.code).toBe(-32602);
    expect(listed.body.tasks).toEqual([]);
    expect(sample(metrics, "taskgate_tasks_created_total") ?? 0).toBe(0);
    expect(sample(metrics, "taskgate_tasks_in_flight")).toBe(0);
    expect(second.body.result).toMatchObject({ resultType: "complete", messages: [{ role: "user", content: { type: "text", text: "Say hello to Ada." } }] });
    expect(second.body.result).not.toHaveProperty("requestState");
    expect(second.body.result._meta["io.modelcontextprotocol/serverInfo"]).toMatchObject({ name: "taskgate-demo" });
    const after = await scrape(a.url);
    expect(sample(after, "taskgate_tasks_created_total") ?? 0).toBe(0);
    expect(sample(after, "taskgate_tasks_ended_total") ?? 0).toBe(0);
  });

  it("asks during resources/read on one process and answers the retry on another with the contents", async () => {
    const round = roundOf((await modern(b.mcpUrl, "resources/read", ASK, { capabilities: ELICIT })).body.result);
    expect(round.request).toMatchObject({ method: "elicitation/create", params: { message: "What about weather?" } });
    const retry = { ...ASK, inputResponses: { [round.key]: { action: "accept", content: { answer: "sunny" } } }, requestState: round.requestState };
    const second = await modern(a.mcpUrl, "resources/read", retry, { capabilities: ELICIT });
    expect(second.body.result).toMatchObject({
      resultType: "complete",
      contents: [{ uri: ASK.uri, mimeType: "text/plain", text: "weather: sunny" }],
      ttlMs: 0,
      cacheScope: "private",
    });
  });

  it("refuses a prompts/get state on another prompt, on resources/read and on tools/call with -32602", async () => {
    const round = roundOf((await modern(a.mcpUrl, "prompts/get", GREET, { capabilities: ELICIT })).body.result);
    const reuse = { inputResponses: { [round.key]: { action: "accept", content: { confirm: true } } }, requestState: round.requestState };
    const elsewhere = [
      ["prompts/get", { name: "another-prompt", arguments: { name: "Ada" } }],
      ["resources/read", ASK],
      ["tools/call", { name: "confirm-greeting", arguments: {} }],
    ] as const;
    for (const [method, params] of elsewhere) {
      const res = await modern(b.mcpUrl, method, { ...params, ...reuse }, { capabilities: ELICIT });
      expect(res.body.error?.code, method).toBe(-32602);
      expect(res.body.error.message, method).toContain("another request");
    }
    // Refused without touching the parked call: the genuine retry still ends it.
    const genuine = { ...GREET, inputResponses: { [round.key]: { action: "decline" } }, requestState: round.requestState };
    expect((await modern(b.mcpUrl, "prompts/get", genuine, { capabilities: ELICIT })).body.result.messages[0].content.text).toBe("Do not greet Ada.");
  });

  it("refuses a resources/read state on another URI and a tools/call state on prompts/get with -32602", async () => {
    const read = roundOf((await modern(a.mcpUrl, "resources/read", ASK, { capabilities: ELICIT })).body.result);
    const other = { uri: "demo://ask/tides", inputResponses: {}, requestState: read.requestState };
    expect((await modern(b.mcpUrl, "resources/read", other, { capabilities: ELICIT })).body.error?.code).toBe(-32602);
    const endRead = { ...ASK, inputResponses: { [read.key]: { action: "decline" } }, requestState: read.requestState };
    expect((await modern(b.mcpUrl, "resources/read", endRead, { capabilities: ELICIT })).body.result.contents[0].text).toBe("weather: (declined)");

    const deploy = { name: "deploy", arguments: { service: "x" } };
    const tool = roundOf((await modern(a.mcpUrl, "tools/call", deploy, { capabilities: ELICIT })).body.result);
    const onPrompt = { name: "deploy", arguments: { name: "Ada" }, inputResponses: {}, requestState: tool.requestState };
    expect((await modern(b.mcpUrl, "prompts/get", onPrompt, { capabilities: ELICIT })).body.error?.code).toBe(-32602);
    const endDeploy = { ...deploy, inputResponses: { [tool.key]: { action: "decline" } }, requestState: tool.requestState };
    expect((await modern(b.mcpUrl, "tools/call", endDeploy, { capabilities: ELICIT })).body.result.content[0].text).toBe("Deployment of x cancelled");
  });

  it("refuses the question to the upstream when the request did not declare elicitation", async () => {
    const res = await modern(a.mcpUrl, "prompts/get", GREET, { capabilities: WITH_TASKS });
    expect(res.body.result).toBeUndefined();
    expect(res.body.error.message).toContain("elicitation");
  });
});
