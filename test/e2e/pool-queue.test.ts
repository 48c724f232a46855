import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ToolListChangedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connectClient, textOf } from "../helpers/mcp-client.js";
import { getTask, modern, WITH_TASKS } from "../helpers/modern.js";
import { ROOT, startGateway, type GatewayProcess } from "../helpers/processes.js";
import { waitFor } from "../helpers/wait-for.js";

const FIXTURE = { command: process.execPath, args: [join(ROOT, "test/fixtures/blocking-server.mjs"), "stdio"] };
const FILESYSTEM = join(ROOT, "node_modules/@modelcontextprotocol/server-filesystem/dist/index.js");
const tools = { hang: { taskSupport: "required" }, mark: { taskSupport: "required" } };

async function untilTask(url: string, taskId: string, done: (task: any) => boolean, what: string) {
  return waitFor(
    async () => {
      const task = (await getTask(url, taskId)).body.result;
      return task && done(task) ? task : undefined;
    },
    { timeoutMs: 15_000, intervalMs: 50, what: `${what} (${taskId})` },
  );
}

const task = async (url: string, name: string, args: Record<string, unknown> = {}) =>
  (await modern(url, "tools/call", { name, arguments: args }, { capabilities: WITH_TASKS })).body.result;
const cancel = (url: string, taskId: string) => modern(url, "tasks/cancel", { taskId }, { capabilities: WITH_TASKS });

/** Top-level keys of one JSON log line, in order, duplicates kept (JSON.parse would hide them). */
function topLevelKeys(line: string): string[] {
  const keys: string[] = [];
  let depth = 0;
  for (let i = 0; i < line.length; i++) {
    const ch = line[i];
    if (ch === '"') {
      let end = i + 1;
      while (line[end] !== '"') end += line[end] === "\\" ? 2 : 1;
      if (depth === 1 && line[end + 1] === ":") keys.push(line.slice(i + 1, end));
      i = end;
    } else if (ch === "{" || ch === "[") depth++;
    else if (ch === "}" || ch === "]") depth--;
  }
  return keys;
}

/** Every JSON log line of a gateway; none may carry a key twice. */
function logLines(gw: GatewayProcess): string[] {
  const lines = gw
    .output()
    .split("\n")
    .filter((l) => l.startsWith("{"));
  expect(lines.filter((l) => new Set(topLevelKeys(l)).size !== topLevelKeys(l).length)).toEqual([]);
  return lines;
}

describe("the bulkhead in front of a pooled stdio upstream", () => {
  let gw: GatewayProcess;
  beforeAll(async () => {
    gw = await startGateway({
      tasks: { cancelGraceMs: 200 },
      upstreams: [
        { name: "one", path: "/mcp", stdio: FIXTURE, tools, poolSize: 1 },
        { name: "tight", path: "/tight", stdio: FIXTURE, tools, poolSize: 1, queueTimeoutMs: 300 },
      ],
    });
  });
  afterAll(async () => gw?.stop());

  it("queues calls beyond the pool, shows each task its place, and a call cancelled in the queue never reaches the upstream", async () => {
    const url = gw.mcpUrl;
    const busy = await task(url, "hang");
    await untilTask(url, busy.taskId, (t) => t.status === "working", "the first call to run");
    const queued = [];
    for (const tag of ["first-in-queue", "dropped-in-queue", "last-in-queue"]) {
      const t = await task(url, "mark", { tag });
      queued.push(t);
      await untilTask(url, t.taskId, (x) => x.statusMessage === `queued: ${queued.length - 1} ahead`, `task ${tag} to say its place`);
    }
    await cancel(url, queued[1].taskId);
    await untilTask(url, queued[1].taskId, (t) => t.status === "cancelled", "the queued call to be cancelled");
    // The queue moved: the last one is now second.
    await untilTask(url, queued[2].taskId, (t) => t.statusMessage === "queued: 1 ahead", "the last call to move up");
    await cancel(url, busy.taskId);
    for (const t of [queued[0], queued[2]]) await untilTask(url, t.taskId, (x) => x.status === "completed", "a queued call to run once a slot is free");
    await waitFor(() => gw.output().includes("mark last-in-queue ran"), { what: "the upstream to log the last call" });
    expect(gw.output()).toContain("mark first-in-queue ran");
    expect(gw.output()).not.toContain("mark dropped-in-queue ran");
    const metrics = await (await fetch(`${gw.url}/metrics`)).text();
    expect(metrics).toMatch(/taskgate_upstream_queue_length\{upstream="one"\} 0/);
    expect(metrics).toMatch(/taskgate_upstream_queue_wait_seconds_count\{upstream="one"\} [1-9]/);
    expect(metrics).toMatch(/taskgate_upstream_pool_processes\{upstream="one",state="idle"\} \d/);
  });

  it("ends a plain call that waited longer than queueTimeoutMs with a clear error", async () => {
    const url = `${gw.url}/tight`;
    const busy = await task(url, "hang");
    await untilTask(url, busy.taskId, (t) => t.status === "working", "the slot to be taken");
    const { client } = await connectClient(url);
    try {
      const outcome = await client.callTool({ name: "echo", arguments: { message: "waits" } }).catch((err: Error) => err);
      expect(outcome).toBeInstanceOf(Error);
      expect((outcome as Error).message).toMatch(/upstream 'tight' is busy: 1 calls were in flight and this one waited 300 ms \(queueTimeoutMs\)/);
    } finally {
      await client.close();
      await cancel(url, busy.taskId);
    }
  });

  it("fans what a pool process says outside its call (list_changed) out to the sessions' GET streams", async () => {
    const { client } = await connectClient(gw.mcpUrl);
    let changed = 0;
    client.setNotificationHandler(ToolListChangedNotificationSchema, async () => {
      changed++;
    });
    try {
      // Called until heard: the client opens its GET stream on its own time after connecting.
      await waitFor(
        async () => {
          expect(textOf(await client.callTool({ name: "broadcast", arguments: {} }))).toBe("broadcast sent");
          return changed > 0;
        },
        { timeoutMs: 10_000, intervalMs: 200, what: "notifications/tools/list_changed on the GET stream" },
      );
    } finally {
      await client.close();
    }
  });

  it("says at start which isolation each upstream runs, and never writes a key twice on a log line", () => {
    const isolation = logLines(gw)
      .map((l) => JSON.parse(l))
      .filter((l) => l.msg === "upstream isolation");
    expect(isolation.map((l) => [l.upstream, l.isolation, l.poolSize])).toEqual([
      ["one", "pool", 1],
      ["tight", "pool", 1],
    ]);
  });
});

describe("questions from the upstream that belong to no call", () => {
  let gw: GatewayProcess;
  let rootDir: string;
  let argDir: string;
  beforeAll(async () => {
    rootDir = mkdtempSync(join(tmpdir(), "taskgate-roots-"));
    argDir = mkdtempSync(join(tmpdir(), "taskgate-fsarg-"));
    gw = await startGateway({
      upstreams: [
        { name: "fs", path: "/fs", stdio: { command: process.execPath, args: [FILESYSTEM] }, roots: [{ uri: `file://${rootDir}`, name: "configured" }] },
        { name: "fsargs", path: "/fsargs", stdio: { command: process.execPath, args: [FILESYSTEM, argDir] } },
      ],
    });
  });
  afterAll(async () => {
    await gw?.stop();
    for (const dir of [rootDir, argDir]) if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it("answers a roots/list asked at start from upstreams[].roots, and says so", async () => {
    await waitFor(() => gw.output().includes("answered the upstream's roots/list from upstreams[].roots"), { what: "the log line saying roots were answered" });
    const { client } = await connectClient(`${gw.url}/fs`);
    try {
      // The server applies the roots it was given asynchronously, after answering `initialized`.
      const listed = await waitFor(
        async () => {
          const text = textOf(await client.callTool({ name: "list_allowed_directories", arguments: {} }));
          return text.includes(rootDir) ? text : undefined;
        },
        { timeoutMs: 10_000, intervalMs: 100, what: "the configured root to be the server's allowed directory" },
      );
      expect(listed).toContain(rootDir);
    } finally {
      await client.close();
    }
  });

  it("refuses a roots/list asked at start without upstreams[].roots, naming the setting, and the server goes on", async () => {
    await waitFor(
      () =>
        /refused a request from the upstream that belongs to no client call \(no client call was running on its process\); set upstreams\[\]\.roots/.test(
          gw.output(),
        ),
      {
        what: "the log line naming upstreams[].roots",
      },
    );
    const { client } = await connectClient(`${gw.url}/fsargs`);
    try {
      expect(textOf(await client.callTool({ name: "list_allowed_directories", arguments: {} }))).toContain(argDir);
    } finally {
      await client.close();
    }
  });

  it("never writes a key twice on a log line", () => {
    expect(logLines(gw).length).toBeGreaterThan(5);
  });
});
