import { randomBytes } from "node:crypto";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { bearerAuth } from "../helpers/auth.js";
import { askingSdkCall, askingTask, callAs, ELICIT_TASKS, untilTaskAs } from "../helpers/principal-calls.js";
import { TERMINAL } from "../helpers/until.js";
import { ROOT, startGateway, type GatewayProcess } from "../helpers/processes.js";
import { waitFor } from "../helpers/wait-for.js";

const FIXTURE = { command: process.execPath, args: [join(ROOT, "test/fixtures/blocking-server.mjs"), "stdio"] };
const ELICIT_ONLY = { elicitation: { form: {} } };
const PRINCIPALS = ["alice", "bob", "carol"];
const call = callAs;
const untilTask = untilTaskAs;
/** A task of the tasks extension whose tool `ask_task` asks: it waits for its question, answers it, and ends. */
const taskCaller = (url: string, principal: string, tag: string) => askingTask(url, principal, tag, "ask_task");
const tools = { ask_task: { taskSupport: "required" }, ask_two: { taskSupport: "required" }, hang: { taskSupport: "required" } };

/** The SDK 1.x client on a 2025-11-25 session, as `principal`, making a plain call that asks. */
const sdkCaller = (url: string, principal: string, tag: string) => askingSdkCall(url, principal, tag, "ask");

/** One MRTR round of `ask` on the 2026-07-28 wire (no tasks declared: the call never detaches). */
function mrtr(url: string, principal: string, params: Record<string, unknown>) {
  return call(url, principal, "tools/call", { name: "ask", ...params }, ELICIT_ONLY);
}

const STORES = [
  { name: "the memory store", store: () => ({}) },
  { name: "Redis", store: () => ({ redisUrl: inject("redisUrl"), keyPrefix: `t${randomBytes(4).toString("hex")}:` }) },
];

describe.each(STORES)("questions on a pooled stdio upstream (default isolation), with $name", ({ store }) => {
  let gw: GatewayProcess;
  beforeAll(async () => {
    gw = await startGateway({
      store: store(),
      auth: bearerAuth(...PRINCIPALS),
      tasks: { cancelGraceMs: 300 },
      upstreams: [{ name: "fixture", path: "/mcp", stdio: FIXTURE, tools }],
    });
  });
  afterAll(async () => gw?.stop());

  it("gives each of 6 concurrent callers (both wires, three principals) its own question and nobody else's", async () => {
    const callers = PRINCIPALS.flatMap((p) => [taskCaller(gw.mcpUrl, p, "on the task wire"), sdkCaller(gw.mcpUrl, p, "on the sdk wire")]);
    const outcomes = await Promise.all(callers);
    const expected = PRINCIPALS.flatMap((p) => [
      { questions: [`Question for ${p} on the task wire?`], status: "completed", text: `answer: ${p}-on the task wire` },
      { questions: [`Question for ${p} on the sdk wire?`], status: "completed", text: `answer: ${p}-on the sdk wire` },
    ]);
    expect(outcomes).toEqual(expected);
    expect(gw.output()).not.toContain("cannot tell which client call");
  });

  it("answers a cancelled call's open question as cancelled, then another caller's question goes through", async () => {
    const created = (await call(gw.mcpUrl, "alice", "tools/call", { name: "ask_task", arguments: { question: "Cancel me?" } }, ELICIT_TASKS)).body.result;
    await untilTask(gw.mcpUrl, "alice", created.taskId, (t) => t.status === "input_required", "the question to be asked");
    await call(gw.mcpUrl, "alice", "tasks/cancel", { taskId: created.taskId });
    // The server's handler is told, so it can unwind (its result may still win the race: the tasks extension's cancel is cooperative).
    await waitFor(() => gw.output().includes("ask [Cancel me?] got cancel"), {
      timeoutMs: 10_000,
      what: "the cancelled call's question to be answered as cancelled",
    });
    await untilTask(gw.mcpUrl, "alice", created.taskId, (t) => TERMINAL.includes(t.status), "the cancelled task to end");
    expect(await taskCaller(gw.mcpUrl, "bob", "after a cancel")).toEqual({
      questions: ["Question for bob after a cancel?"],
      status: "completed",
      text: "answer: bob-after a cancel",
    });
  });

  it("leaves an MRTR round unanswered, and another caller's question is still asked and answered", async () => {
    const left = (await mrtr(gw.mcpUrl, "alice", { arguments: { question: "Never answered?" } })).body.result;
    expect(left.resultType).toBe("input_required");
    const args = { question: "Answered?" };
    const round = (await mrtr(gw.mcpUrl, "bob", { arguments: args })).body.result;
    expect(round.resultType).toBe("input_required");
    const [key, request] = Object.entries(round.inputRequests)[0] as [string, any];
    expect(request.params.message).toBe("Answered?");
    const retry = { arguments: args, inputResponses: { [key]: { action: "accept", content: { answer: "yes" } } }, requestState: round.requestState };
    const done = (await mrtr(gw.mcpUrl, "bob", retry)).body.result;
    expect(done).toMatchObject({ resultType: "complete", content: [{ text: "answer: yes" }] });
  });

  it("asks the one call that asks while three long calls are in flight", async () => {
    const long = await Promise.all([1, 2, 3].map(async () => (await call(gw.mcpUrl, "carol", "tools/call", { name: "hang", arguments: {} })).body.result));
    await Promise.all(long.map((t) => untilTask(gw.mcpUrl, "carol", t.taskId, (x) => x.status === "working", "a long call to run")));
    expect(await taskCaller(gw.mcpUrl, "alice", "beside three long calls")).toEqual({
      questions: ["Question for alice beside three long calls?"],
      status: "completed",
      text: "answer: alice-beside three long calls",
    });
    await Promise.all(long.map((t) => call(gw.mcpUrl, "carol", "tasks/cancel", { taskId: t.taskId })));
  });

  it("keeps the other of two parallel questions open after a partial answer, then ends with both", async () => {
    const created = (await call(gw.mcpUrl, "bob", "tools/call", { name: "ask_two", arguments: { first: "Colour?", second: "Size?" } }, ELICIT_TASKS)).body
      .result;
    const both = await untilTask(gw.mcpUrl, "bob", created.taskId, (t) => Object.keys(t.inputRequests ?? {}).length === 2, "both questions");
    const byMessage = Object.fromEntries(Object.entries(both.inputRequests).map(([k, r]: [string, any]) => [r.params.message, k]));
    await call(gw.mcpUrl, "bob", "tasks/update", {
      taskId: created.taskId,
      inputResponses: { [byMessage["Colour?"]!]: { action: "accept", content: { answer: "green" } } },
    });
    const partial = await untilTask(
      gw.mcpUrl,
      "bob",
      created.taskId,
      (t) => !Object.hasOwn(t.inputRequests ?? {}, byMessage["Colour?"]!),
      "the answered question to go",
    );
    expect(partial.status).toBe("input_required");
    expect(Object.keys(partial.inputRequests)).toEqual([byMessage["Size?"]]);
    await call(gw.mcpUrl, "bob", "tasks/update", {
      taskId: created.taskId,
      inputResponses: { [byMessage["Size?"]!]: { action: "accept", content: { answer: "large" } } },
    });
    const done = await untilTask(gw.mcpUrl, "bob", created.taskId, (t) => TERMINAL.includes(t.status), "the end");
    expect(done).toMatchObject({ status: "completed", result: { content: [{ text: "green + large" }] } });
  });
});
