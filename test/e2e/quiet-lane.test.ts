import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { as, bearerAuth } from "../helpers/auth.js";
import { useCleanups } from "../helpers/cleanups.js";
import { connectClient, textOf } from "../helpers/mcp-client.js";
import { ROOT, startGateway, type GatewayProcess } from "../helpers/processes.js";
import { waitFor } from "../helpers/wait-for.js";

// The quiet lane of `isolation: pool`: a tool that ran alone five times, fast and
// asking nothing, has its calls share one process of the pool. The fixture's `quiet` tool waits
// for a file when told to (so a test decides when a call ends, whatever happens meanwhile, a
// cancel too), asks when given a question, and answers with its process id.
const FIXTURE = { command: process.execPath, args: [join(ROOT, "test/fixtures/blocking-server.mjs"), "stdio"] };
const PRINCIPALS = ["alice", "bob", "carol"];
const STORES = [
  { name: "the memory store", store: () => ({}) },
  { name: "Redis", store: () => ({ redisUrl: inject("redisUrl"), keyPrefix: `t${randomBytes(4).toString("hex")}:` }) },
];

function pidOf(result: unknown): string {
  const pid = /^pid (\d+)/.exec(textOf(result))?.[1];
  if (!pid) throw new Error(`no pid in ${textOf(result)}`);
  return pid;
}

describe.each(STORES)("the quiet lane of a pooled stdio upstream (default configuration), with $name", ({ store }) => {
  let gw: GatewayProcess;
  let dir: string;
  const cleanups = useCleanups();
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "taskgate-lane-"));
    gw = await startGateway({ store: store(), auth: bearerAuth(...PRINCIPALS), upstreams: [{ name: "fixture", path: "/mcp", stdio: FIXTURE }] });
  });
  afterAll(async () => {
    await gw?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  /** The SDK 1.x client as `principal`; the questions it is shown are kept. */
  async function clientAs(principal: string): Promise<{ client: Client; questions: string[] }> {
    const questions: string[] = [];
    const { client } = await connectClient(gw.mcpUrl, {
      headers: as(principal),
      elicit: (message) => {
        questions.push(message);
        return { action: "accept", content: { answer: `${principal}'s answer` } };
      },
    });
    cleanups.track(client);
    return { client, questions };
  }

  /** Five runs alone, one after another: from then on `quiet` is a quiet tool (however it was before). */
  async function warm(client: Client): Promise<void> {
    for (let i = 0; i < 5; i++) await client.callTool({ name: "quiet", arguments: {} });
  }

  /** Calls waiting for `file`, once the upstream says so: the pids they wait in. */
  function waitingFor(file: string, count: number): Promise<string[]> {
    const pattern = new RegExp(`quiet waits for ${file} in pid (\\d+)`, "g");
    return waitFor(
      () => {
        const pids = [...gw.output().matchAll(pattern)].map((m) => m[1]!);
        return pids.length >= count ? pids : undefined;
      },
      { timeoutMs: 15_000, what: `${count} calls waiting for ${file}` },
    );
  }

  const go = (file: string) => writeFileSync(join(dir, file), "");

  it("runs a quiet tool's calls from several callers on one process, at once", async () => {
    const callers = await Promise.all(PRINCIPALS.map(clientAs));
    await warm(callers[0]!.client);
    const calls = callers.map(({ client }) => client.callTool({ name: "quiet", arguments: { waitFile: join(dir, "together") } }));
    const waiting = await waitingFor("together", 3);
    go("together");
    const pids = (await Promise.all(calls)).map(pidOf);
    expect(new Set(waiting).size).toBe(1);
    expect(pids).toEqual([waiting[0], waiting[0], waiting[0]]);
  });

  it("holds a question asked on the lane until the other call ends, then shows it to the caller who asked, and to nobody else", async () => {
    const [alice, bob] = await Promise.all(["alice", "bob"].map(clientAs));
    await warm(alice!.client);
    const waits = alice!.client.callTool({ name: "quiet", arguments: { waitFile: join(dir, "held") } });
    await waitingFor("held", 1);
    const asks = bob!.client.callTool({ name: "quiet", arguments: { question: "Is this bob's own?" } });
    await waitFor(() => gw.output().includes("is held until one call is left"), { timeoutMs: 15_000, what: "the question to be held" });
    expect(bob!.questions).toEqual([]);
    go("held");
    const [waited, asked] = await Promise.all([waits, asks]);
    expect(textOf(asked)).toBe(`pid ${pidOf(waited)} answer: bob's answer`);
    expect(bob!.questions).toEqual(["Is this bob's own?"]);
    expect(alice!.questions).toEqual([]);
  });

  it("never shows what a call cancelled on the lane asks later, and gives later calls a fresh process", async () => {
    const [alice, bob, carol] = await Promise.all(PRINCIPALS.map(clientAs));
    await warm(alice!.client);
    // Bob's call keeps the lane's process alive after alice's is cancelled.
    const bobs = bob!.client.callTool({ name: "quiet", arguments: { waitFile: join(dir, "bob-goes") } });
    await waitingFor("bob-goes", 1);
    const cancel = new AbortController();
    const alices = alice!.client.callTool({ name: "quiet", arguments: { waitFile: join(dir, "ghost-asks"), question: "Alice's secret?" } }, undefined, {
      signal: cancel.signal,
    });
    const [lanePid] = await waitingFor("ghost-asks", 1);
    cancel.abort("changed my mind");
    await expect(alices).rejects.toThrow();
    // The lane takes no more calls: carol's runs elsewhere.
    expect(pidOf(await carol!.client.callTool({ name: "quiet", arguments: {} }))).not.toBe(lanePid);
    go("ghost-asks");
    await waitFor(() => gw.output().includes("quiet [Alice's secret?] got cancel"), {
      timeoutMs: 15_000,
      what: "the cancelled call's question to be answered as cancelled",
    });
    go("bob-goes");
    expect(pidOf(await bobs)).toBe(lanePid);
    for (const { questions } of [alice!, bob!, carol!]) expect(questions).toEqual([]);
  });
});

describe("shareQuietCalls: false", () => {
  let gw: GatewayProcess;
  let dir: string;
  const cleanups = useCleanups();
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "taskgate-lane-"));
    gw = await startGateway({ upstreams: [{ name: "fixture", path: "/mcp", stdio: FIXTURE, shareQuietCalls: false }] });
  });
  afterAll(async () => {
    await gw?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it("runs every call alone on a process, however quiet its tool", async () => {
    const { client } = await connectClient(gw.mcpUrl);
    cleanups.track(client);
    for (let i = 0; i < 6; i++) await client.callTool({ name: "quiet", arguments: {} });
    const calls = [1, 2].map(() => client.callTool({ name: "quiet", arguments: { waitFile: join(dir, "apart") } }));
    const pattern = /quiet waits for apart in pid (\d+)/g;
    const waiting = await waitFor(
      () => {
        const pids = [...gw.output().matchAll(pattern)].map((m) => m[1]!);
        return pids.length >= 2 ? pids : undefined;
      },
      { timeoutMs: 15_000, what: "two calls waiting" },
    );
    writeFileSync(join(dir, "apart"), "");
    const pids = (await Promise.all(calls)).map(pidOf);
    expect(new Set(waiting).size).toBe(2);
    expect(new Set(pids).size).toBe(2);
  });
});
