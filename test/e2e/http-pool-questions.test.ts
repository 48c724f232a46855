import { randomBytes } from "node:crypto";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { CreateMessageRequestSchema, ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { startEverythingHttp, startFixtureHttp, type FixtureHttpServer } from "../fixtures/upstreams.js";
import { as, bearerAuth } from "../helpers/auth.js";
import { textOf } from "../helpers/mcp-client.js";
import { modern, WITH_TASKS } from "../helpers/modern.js";
import { askingSdkCall, askingTask, callAs, ELICIT_TASKS, untilTaskAs } from "../helpers/principal-calls.js";
import { TERMINAL } from "../helpers/until.js";
import { sample, scrape } from "../helpers/prometheus.js";
import { startGateway, type GatewayProcess } from "../helpers/processes.js";
import { waitFor } from "../helpers/wait-for.js";

// Questions an HTTP upstream asks the SDK's README way (`server.server.elicitInput(...)`,
// `createMessage`, `listRoots`): no related request, so they come on the upstream session's GET
// stream. With the default isolation (pool) every call runs alone on a session of its own, and
// such a question reaches the caller whose call made it.

const PRINCIPALS = ["alice", "bob", "carol"];
const call = callAs;
const untilTask = untilTaskAs;
/** A task of the tasks extension whose tool `ask_session_task` asks: it waits for its question, answers it, and ends. */
const taskCaller = (url: string, principal: string, tag: string) => askingTask(url, principal, tag, "ask_session_task");
const tools = { ask_session_task: { taskSupport: "required" }, quiet: { taskSupport: "required" } };

/** The SDK 1.x client on a 2025-11-25 session, as `principal`: a plain call whose tool asks on the GET stream. */
const sdkCaller = (url: string, principal: string, tag: string, kind: "elicit" | "sample" | "roots" = "elicit") =>
  askingSdkCall(url, principal, tag, "ask_session", { kind });

const UPSTREAMS = [
  { name: "answering over SSE", flags: [] as string[] },
  { name: "answering with one JSON body (enableJsonResponse)", flags: ["--json"] },
];

const STORES = [
  { name: "the memory store", store: () => ({}) },
  { name: "Redis", store: () => ({ redisUrl: inject("redisUrl"), keyPrefix: `t${randomBytes(4).toString("hex")}:` }) },
];

describe.each(UPSTREAMS)("GET-stream questions of an HTTP upstream $name, default isolation", ({ flags }) => {
  describe.each(STORES)("with $name", ({ store }) => {
    let upstream: FixtureHttpServer;
    let gw: GatewayProcess;
    beforeAll(async () => {
      upstream = await startFixtureHttp(0, flags);
      gw = await startGateway({
        store: store(),
        auth: bearerAuth(...PRINCIPALS),
        tasks: { cancelGraceMs: 300 },
        upstreams: [{ name: "fixture", path: "/mcp", http: { url: upstream.url }, tools }],
      });
    });
    afterAll(async () => {
      await gw?.stop();
      await upstream?.stop();
    });

    it("gives each of 6 concurrent callers (both wires, three principals) its own question and nobody else's", async () => {
      const callers = PRINCIPALS.flatMap((p) => [taskCaller(gw.mcpUrl, p, "on the task wire"), sdkCaller(gw.mcpUrl, p, "on the sdk wire")]);
      const outcomes = await Promise.all(callers);
      const expected = PRINCIPALS.flatMap((p) => [
        { questions: [`Question for ${p} on the task wire?`], status: "completed", text: `answer: ${p}-on the task wire` },
        { questions: [`Question for ${p} on the sdk wire?`], status: "completed", text: `answer: ${p}-on the sdk wire` },
      ]);
      expect(outcomes).toEqual(expected);
      expect(gw.output()).not.toContain("taskgate has no client to ask");
    });

    it("sends a sampling request and a roots/list asked on the GET stream to the caller whose call asked", async () => {
      const outcomes = await Promise.all([
        sdkCaller(gw.mcpUrl, "alice", "sampled", "sample"),
        sdkCaller(gw.mcpUrl, "bob", "rooted", "roots"),
        sdkCaller(gw.mcpUrl, "carol", "sampled too", "sample"),
      ]);
      expect(outcomes).toEqual([
        { questions: ["Question for alice sampled?"], status: "completed", text: "sampled: alice-sampled" },
        { questions: ["roots"], status: "completed", text: "Question for bob rooted? roots: file:///home/bob/rooted" },
        { questions: ["Question for carol sampled too?"], status: "completed", text: "sampled: carol-sampled too" },
      ]);
    });

    it("answers a cancelled call's later question as cancelled, shows it to no one, and ends its session", async () => {
      const dir = mkdtempSync(join(tmpdir(), "taskgate-http-pool-"));
      const waitFile = join(dir, "go");
      const created = (
        await call(gw.mcpUrl, "alice", "tools/call", { name: "quiet", arguments: { waitFile, question: "Asked after the cancel?" } }, ELICIT_TASKS)
      ).body.result;
      const session = await waitFor(() => /quiet runs on session (\S+)/.exec(upstream.output())?.[1], {
        timeoutMs: 10_000,
        what: "the call to start on an upstream session",
      });
      await call(gw.mcpUrl, "alice", "tasks/cancel", { taskId: created.taskId });
      await untilTask(gw.mcpUrl, "alice", created.taskId, (t) => TERMINAL.includes(t.status), "the cancelled task to end");
      writeFileSync(waitFile, "go");
      // Answered as cancelled while the session lasts; once it is deleted, the question cannot be sent at all.
      const outcome = await waitFor(() => /quiet \[Asked after the cancel\?\] (got cancel|failed)/.exec(upstream.output())?.[1], {
        timeoutMs: 10_000,
        what: "the question asked after the cancel to be answered as cancelled, or refused with its session",
      });
      expect(["got cancel", "failed"]).toContain(outcome);
      const ended = (await call(gw.mcpUrl, "alice", "tasks/get", { taskId: created.taskId })).body.result;
      expect(ended.status).toBe("cancelled");
      expect(ended.inputRequests).toBeUndefined();
      // The session the cancelled call ran on is ended (DELETE), never given to another call.
      await waitFor(async () => !(await sessionIds(upstream)).includes(session), { timeoutMs: 10_000, what: "the cancelled call's session to be deleted" });
      const next = await Promise.all([1, 2, 3].map(() => sdkSessionId(gw.mcpUrl, "bob")));
      expect(next).not.toContain(session);
      expect(await taskCaller(gw.mcpUrl, "bob", "after a cancel")).toEqual({
        questions: ["Question for bob after a cancel?"],
        status: "completed",
        text: "answer: bob-after a cancel",
      });
    });
  });
});

describe("server-everything 2026.8 over Streamable HTTP, default isolation", () => {
  let everything: { url: string; stop(): Promise<void> };
  let gw: GatewayProcess;
  beforeAll(async () => {
    everything = await startEverythingHttp();
    gw = await startGateway({ auth: bearerAuth(...PRINCIPALS), upstreams: [{ name: "everything", path: "/mcp", http: { url: everything.url } }] });
  });
  afterAll(async () => {
    await gw?.stop();
    await everything?.stop();
  });

  /** Its elicitation and sampling tools, called by `principal` through the SDK client, answered with the principal's own words. */
  async function everythingCaller(principal: string, tool: "trigger-elicitation-request" | "trigger-sampling-request") {
    const seen: string[] = [];
    const client = new Client({ name: `sdk-${principal}`, version: "1.0.0" }, { capabilities: { elicitation: {}, sampling: {} } });
    client.setRequestHandler(ElicitRequestSchema, async (req) => {
      seen.push(req.params.message);
      return { action: "accept", content: { name: `name of ${principal}` } };
    });
    client.setRequestHandler(CreateMessageRequestSchema, async (req) => {
      const first = req.params.messages[0]?.content;
      seen.push(first && "text" in first ? String(first.text) : "?");
      return { role: "assistant", model: "test", content: { type: "text", text: `sample of ${principal}` } };
    });
    await client.connect(new StreamableHTTPClientTransport(new URL(gw.mcpUrl), { requestInit: { headers: as(principal) } }));
    try {
      const args = tool === "trigger-sampling-request" ? { prompt: `prompt of ${principal}`, maxTokens: 10 } : {};
      return { seen, text: textOf(await client.callTool({ name: tool, arguments: args })) };
    } finally {
      await client.close();
    }
  }

  it("sends each caller's elicitation and sampling request to that caller, six callers at once", async () => {
    const runs = await Promise.all(
      PRINCIPALS.flatMap((p) => [everythingCaller(p, "trigger-elicitation-request"), everythingCaller(p, "trigger-sampling-request")]),
    );
    PRINCIPALS.forEach((p, i) => {
      const [elicited, sampled] = [runs[2 * i]!, runs[2 * i + 1]!];
      expect(elicited.seen).toEqual(["Please provide inputs for the following fields:"]);
      expect(elicited.text).toContain(`- Name: name of ${p}`);
      expect(sampled.seen).toEqual([expect.stringContaining(`prompt of ${p}`)]);
      expect(sampled.text).toContain(`sample of ${p}`);
    });
  });
});

describe("the bulkhead of an HTTP upstream's session pool", () => {
  let upstream: FixtureHttpServer;
  let gw: GatewayProcess;
  beforeAll(async () => {
    upstream = await startFixtureHttp();
    const queueTools = { hang: { taskSupport: "required" }, mark: { taskSupport: "required" } };
    gw = await startGateway({
      tasks: { cancelGraceMs: 200 },
      upstreams: [{ name: "fixture", path: "/mcp", http: { url: upstream.url }, tools: queueTools, poolSize: 1, shareQuietCalls: false }],
    });
  });
  afterAll(async () => {
    await gw?.stop();
    await upstream?.stop();
  });

  it("queues calls beyond poolSize sessions, shows each its place, and runs the next once a session is free", async () => {
    const task = async (name: string, args: Record<string, unknown> = {}) =>
      (await modern(gw.mcpUrl, "tools/call", { name, arguments: args }, { capabilities: WITH_TASKS })).body.result;
    const untilStatus = (taskId: string, done: (t: any) => boolean, what: string) =>
      waitFor(
        async () => {
          const t = (await modern(gw.mcpUrl, "tasks/get", { taskId }, { capabilities: WITH_TASKS })).body.result;
          return t && done(t) ? t : undefined;
        },
        { timeoutMs: 15_000, intervalMs: 50, what },
      );
    const busy = await task("hang");
    await untilStatus(busy.taskId, (t) => t.status === "working", "the first call to run");
    const queued = [await task("mark", { tag: "first" })];
    await untilStatus(queued[0].taskId, (t) => t.statusMessage === "queued: 0 ahead", "the first queued call to say its place");
    queued.push(await task("mark", { tag: "second" }));
    await untilStatus(queued[1].taskId, (t) => t.statusMessage === "queued: 1 ahead", "the second queued call to say its place");
    expect(upstream.output()).not.toContain("mark first ran");
    await modern(gw.mcpUrl, "tasks/cancel", { taskId: busy.taskId }, { capabilities: WITH_TASKS });
    for (const [i, tag] of ["first", "second"].entries()) {
      const done = await untilStatus(queued[i].taskId, (t) => TERMINAL.includes(t.status), `the ${tag} queued call to end`);
      expect(done).toMatchObject({ status: "completed", result: { content: [{ text: `marked ${tag}` }] } });
    }
  });
});

describe("an HTTP upstream that keeps no sessions, default isolation", () => {
  let upstream: FixtureHttpServer;
  let gw: GatewayProcess;
  beforeAll(async () => {
    upstream = await startFixtureHttp(0, ["--stateless"]);
    gw = await startGateway({ upstreams: [{ name: "fixture", path: "/mcp", http: { url: upstream.url } }] });
  });
  afterAll(async () => {
    await gw?.stop();
    await upstream?.stop();
  });

  it("runs its calls on the home connection: no pool of sessions is started", async () => {
    const ids = await Promise.all([1, 2, 3, 4].map(() => sdkSessionId(gw.mcpUrl, "anyone")));
    expect(ids).toEqual(["none", "none", "none", "none"]);
    const metrics = await scrape(gw.url);
    for (const state of ["idle", "busy", "starting", "stopping"])
      expect(sample(metrics, "taskgate_upstream_pool_processes", { upstream: "fixture", state })).toBe(0);
  });
});

describe("an HTTP upstream with isolation: shared keeps one session for every call", () => {
  let upstream: FixtureHttpServer;
  let gw: GatewayProcess;
  beforeAll(async () => {
    upstream = await startFixtureHttp();
    gw = await startGateway({
      auth: bearerAuth(...PRINCIPALS),
      upstreams: [{ name: "fixture", path: "/mcp", http: { url: upstream.url }, isolation: "shared" }],
    });
  });
  afterAll(async () => {
    await gw?.stop();
    await upstream?.stop();
  });

  it("runs concurrent calls on the one session, and refuses a GET-stream question it cannot tie to a call", async () => {
    const ids = await Promise.all([1, 2, 3, 4].map(() => sdkSessionId(gw.mcpUrl, "alice")));
    expect(new Set(ids).size).toBe(1);
    expect(await sessionIds(upstream)).toEqual([ids[0]]);
    const refused = await sdkCaller(gw.mcpUrl, "bob", "on the shared session");
    expect(refused.questions).toEqual([]);
    expect(refused.text).toContain("taskgate has no client to ask");
  });
});

async function sessionIds(upstream: FixtureHttpServer): Promise<string[]> {
  const res = await fetch(`${upstream.base}/admin/sessions`);
  return ((await res.json()) as { ids: string[] }).ids;
}

/** Which upstream session ran one plain call of `principal`'s. */
async function sdkSessionId(url: string, principal: string): Promise<string> {
  const client = new Client({ name: `sdk-${principal}`, version: "1.0.0" });
  await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: as(principal) } }));
  try {
    return textOf(await client.callTool({ name: "session_id", arguments: {} }));
  } finally {
    await client.close();
  }
}
