import { createHmac, randomBytes } from "node:crypto";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { getTask, modern, WITH_TASKS } from "../helpers/modern.js";
import { demoStdio, ROOT, startGateway, type GatewayProcess } from "../helpers/processes.js";
import { waitFor } from "../helpers/wait-for.js";

const ELICIT = { ...WITH_TASKS, elicitation: { form: {} } };
const SECRET = randomBytes(32).toString("hex");

/** A requestState signed with the shared secret, as taskgate would, but with a payload of our choosing. */
function signed(payload: Record<string, unknown>, secret = SECRET): string {
  const body = Buffer.from(JSON.stringify(payload)).toString("base64url");
  return `${body}.${createHmac("sha256", secret).update(body).digest("base64url")}`;
}

function payloadOf(state: string): Record<string, unknown> {
  return JSON.parse(Buffer.from(state.split(".")[0]!, "base64url").toString("utf8")) as Record<string, unknown>;
}

describe("MRTR before detaching (2026-07-28, https://modelcontextprotocol.io/specification/2026-07-28/basic/patterns/mrtr and https://github.com/modelcontextprotocol/ext-tasks/blob/main/specification/draft/tasks.md)", () => {
  let a: GatewayProcess;
  let b: GatewayProcess;
  beforeAll(async () => {
    const store = { redisUrl: inject("redisUrl"), keyPrefix: `t${randomBytes(4).toString("hex")}:` };
    const config = {
      store,
      // 1 s: a question must arrive within it on a loaded machine (300 ms failed under a full run).
      tasks: { detachAfterMs: 1000, requestStateSecret: SECRET },
      upstreams: [
        { name: "demo", path: "/mcp", stdio: demoStdio() },
        { name: "fixture", path: "/fixture", stdio: { command: process.execPath, args: [join(ROOT, "test/fixtures/blocking-server.mjs"), "stdio"] } },
      ],
    };
    [a, b] = await Promise.all([startGateway(config), startGateway(config)]);
    // Calls run on processes initialized with their caller's capabilities, one started on a
    // profile's first call (docs/operations/isolation.md#caller-capabilities): one quick call each,
    // so the questions below arrive within detachAfterMs of a call, not after a process start.
    const warm = (gw: GatewayProcess, path: string, name: string, args: Record<string, unknown>) =>
      modern(`${gw.url}${path}`, "tools/call", { name, arguments: args }, { capabilities: ELICIT });
    await Promise.all([a, b].flatMap((gw) => [warm(gw, "/mcp", "echo", { text: "warm" }), warm(gw, "/fixture", "echo", { message: "warm" })]));
  });
  afterAll(async () => Promise.all([a?.stop(), b?.stop()]));

  it("answers a question before detachAfterMs with input_required, continues on another process, then detaches", async () => {
    const first = await modern(a.mcpUrl, "tools/call", { name: "deploy", arguments: { service: "billing", seconds: 1.5 } }, { capabilities: ELICIT });
    const round = first.body.result;
    expect(round.resultType).toBe("input_required");
    const keys = Object.keys(round.inputRequests);
    expect(keys).toHaveLength(1);
    expect(round.inputRequests[keys[0]!]).toMatchObject({ method: "elicitation/create", params: { message: "Deploy billing?" } });
    expect(typeof round.requestState).toBe("string");
    const parkId = payloadOf(round.requestState).p as string;
    // The parked call is not a task the client knows of.
    expect((await getTask(b.mcpUrl, parkId)).body.error.code).toBe(-32602);

    const retry = {
      name: "deploy",
      arguments: { service: "billing", seconds: 1.5 },
      inputResponses: { [keys[0]!]: { action: "accept", content: { confirm: true } } },
      requestState: round.requestState,
    };
    const second = await modern(b.mcpUrl, "tools/call", retry, { capabilities: ELICIT });
    const task = second.body.result;
    expect(task.resultType).toBe("task");
    expect(task).not.toHaveProperty("requestState");
    const done = await waitFor(
      async () => {
        const t = (await getTask(b.mcpUrl, task.taskId)).body.result;
        return t?.status === "completed" ? t : undefined;
      },
      { timeoutMs: 15_000, intervalMs: 100, what: "the detached deploy to complete" },
    );
    expect(done.result.content[0].text).toBe("Deployed billing");
    expect(done).not.toHaveProperty("requestState");
  });

  it("ends inline when the answered call finishes within detachAfterMs", async () => {
    const first = (await modern(b.mcpUrl, "tools/call", { name: "deploy", arguments: { service: "db" } }, { capabilities: ELICIT })).body.result;
    const key = Object.keys(first.inputRequests)[0]!;
    const retry = { name: "deploy", arguments: { service: "db" }, inputResponses: { [key]: { action: "decline" } }, requestState: first.requestState };
    const second = await modern(a.mcpUrl, "tools/call", retry, { capabilities: ELICIT });
    expect(second.body.result).toMatchObject({ resultType: "complete", content: [{ type: "text", text: "Deployment of db cancelled" }] });
  });

  it("runs MRTR for a client without the extension too, and never detaches its call", async () => {
    const first = (await modern(a.mcpUrl, "tools/call", { name: "deploy", arguments: { service: "web", seconds: 0.6 } }, { capabilities: { elicitation: {} } }))
      .body.result;
    expect(first.resultType).toBe("input_required");
    const key = Object.keys(first.inputRequests)[0]!;
    const retry = {
      name: "deploy",
      arguments: { service: "web", seconds: 0.6 },
      inputResponses: { [key]: { action: "accept", content: { confirm: true } } },
      requestState: first.requestState,
    };
    const second = await modern(b.mcpUrl, "tools/call", retry, { capabilities: { elicitation: {} } });
    expect(second.body.result).toMatchObject({ resultType: "complete", content: [{ text: "Deployed web" }] });
  });

  it("keeps asking what is still open after a partial answer, then ends inline", async () => {
    const call = { name: "ask_two", arguments: { first: "Colour?", second: "Size?" } };
    const answers: Record<string, string> = { "Colour?": "green", "Size?": "large" };
    let round = (await modern(`${a.url}/fixture`, "tools/call", call, { capabilities: ELICIT })).body.result;
    const seen = new Set<string>();
    for (let i = 0; i < 4 && round.resultType === "input_required"; i++) {
      // Answer one open question per round (a partial answer when two are open).
      const [key, request] = Object.entries(round.inputRequests)[0] as [string, any];
      expect(seen.has(key)).toBe(false);
      seen.add(key);
      const retry = {
        ...call,
        inputResponses: { [key]: { action: "accept", content: { answer: answers[request.params.message] } } },
        requestState: round.requestState,
      };
      round = (await modern(`${(i % 2 ? a : b).url}/fixture`, "tools/call", retry, { capabilities: ELICIT })).body.result;
    }
    expect(seen.size).toBe(2);
    expect(round).toMatchObject({ resultType: "complete", content: [{ text: "green + large" }] });
  });

  it("refuses a forged, tampered or expired requestState with -32602", async () => {
    const first = (await modern(a.mcpUrl, "tools/call", { name: "deploy", arguments: { service: "x" } }, { capabilities: ELICIT })).body.result;
    const payload = payloadOf(first.requestState);
    const attempts = [
      "not-a-state",
      signed(payload, "another secret entirely, 32 chars long"),
      `${Buffer.from(JSON.stringify({ ...payload, t: "echo" })).toString("base64url")}.${first.requestState.split(".")[1]}`,
      signed({ ...payload, e: Date.now() - 1000 }),
    ];
    for (const requestState of attempts) {
      const res = await modern(
        b.mcpUrl,
        "tools/call",
        { name: "deploy", arguments: { service: "x" }, inputResponses: {}, requestState },
        { capabilities: ELICIT },
      );
      expect(res.body.error?.code, requestState).toBe(-32602);
    }
    expect(
      (
        await modern(
          b.mcpUrl,
          "tools/call",
          { name: "deploy", arguments: { service: "x" }, inputResponses: {}, requestState: signed({ ...payload, e: Date.now() - 1 }) },
          { capabilities: ELICIT },
        )
      ).body.error.message,
    ).toContain("expired");
    // The genuine state still works: decline, so the parked call ends (and leaves the shared upstream free).
    const key = Object.keys(first.inputRequests)[0]!;
    const genuine = { name: "deploy", arguments: { service: "x" }, inputResponses: { [key]: { action: "decline" } }, requestState: first.requestState };
    expect((await modern(b.mcpUrl, "tools/call", genuine, { capabilities: ELICIT })).body.result.content[0].text).toBe("Deployment of x cancelled");
  });
});
