import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connectClient, textOf } from "../helpers/mcp-client.js";
import { childPids, demoStdio, startGateway, type GatewayProcess } from "../helpers/processes.js";
import { waitFor } from "../helpers/wait-for.js";

describe("taskgate as a transparent proxy in front of the demo server over stdio", () => {
  let gw: GatewayProcess;
  beforeAll(async () => {
    gw = await startGateway({ upstreams: [{ name: "demo", path: "/mcp", stdio: demoStdio() }] });
  });
  afterAll(async () => gw?.stop());

  it("lists and calls tools", async () => {
    const { client } = await connectClient(gw.mcpUrl);
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).toEqual(expect.arrayContaining(["echo", "sleep", "deploy", "fail", "crash", "hang"]));
    expect(textOf(await client.callTool({ name: "echo", arguments: { text: "hello" } }))).toContain("hello");
    await client.close();
  });

  it("relays progress notifications with the client's own token", async () => {
    const { client } = await connectClient(gw.mcpUrl);
    const seen: number[] = [];
    const result = await client.callTool({ name: "sleep", arguments: { seconds: 0.6, progressIntervalMs: 100 } }, undefined, {
      onprogress: (p) => seen.push(p.progress),
    });
    expect(textOf(result)).toMatch(/Slept/);
    expect(seen.length).toBeGreaterThanOrEqual(2);
    await client.close();
  });

  it("relays an elicitation to the calling client and its answer back", async () => {
    const asked: string[] = [];
    const { client } = await connectClient(gw.mcpUrl, {
      elicit: (message) => (asked.push(message), { action: "accept", content: { confirm: true } }),
    });
    const result = await client.callTool({ name: "deploy", arguments: { service: "billing", seconds: 0.1 } });
    expect(asked).toEqual([expect.stringContaining("billing")]);
    expect(textOf(result)).toContain("Deployed billing");
    await client.close();
  });

  it("refuses an elicitation for a client that did not declare the capability, and the call goes on", async () => {
    const { client } = await connectClient(gw.mcpUrl);
    const outcome = await client.callTool({ name: "deploy", arguments: { service: "billing", seconds: 0.1 } }).catch((e: Error) => e);
    // The demo server lets the refusal end the call as a JSON-RPC error naming the missing capability.
    expect(outcome).toBeInstanceOf(Error);
    expect((outcome as Error).message).toContain("did not declare the elicitation capability");
    expect(textOf(await client.callTool({ name: "echo", arguments: { text: "still here" } }))).toContain("still here");
    await client.close();
  });

  it("relays isError results and JSON-RPC errors untouched", async () => {
    const { client } = await connectClient(gw.mcpUrl);
    const failed = await client.callTool({ name: "fail", arguments: { message: "nope" } });
    expect(failed.isError).toBe(true);
    const crashed = await client.callTool({ name: "crash", arguments: { message: "boom" } }).catch((e: Error) => e);
    expect(crashed).toBeInstanceOf(Error);
    expect((crashed as Error).message).toContain("boom");
    await client.close();
  });

  it("keeps two clients calling at once from crossing", async () => {
    const a = await connectClient(gw.mcpUrl);
    const b = await connectClient(gw.mcpUrl);
    const calls = Array.from({ length: 20 }, (_, i) => {
      const who = i % 2 ? a : b;
      const text = `${i % 2 ? "a" : "b"}-${i}`;
      return who.client.callTool({ name: "echo", arguments: { text } }).then((r) => [text, textOf(r)] as const);
    });
    for (const [sent, got] of await Promise.all(calls)) expect(got).toContain(sent);
    await a.client.close();
    await b.client.close();
  });

  it("fails in-flight calls clearly when the upstream dies, and serves the next call after the restart", async () => {
    const { client } = await connectClient(gw.mcpUrl);
    // The home process and the pool's: whichever runs the call dies with the others.
    const upstreamPids = await waitFor(() => {
      const pids = childPids(gw.proc.pid!);
      return pids.length ? pids : undefined;
    });
    let running!: () => void;
    const started = new Promise<void>((r) => (running = r));
    const inFlight = client
      .callTool({ name: "sleep", arguments: { seconds: 30, progressIntervalMs: 50 } }, undefined, { onprogress: () => running() })
      .catch((e: Error) => e);
    await started; // the call is in the upstream's hands
    for (const pid of new Set([...upstreamPids, ...childPids(gw.proc.pid!)])) {
      try {
        process.kill(pid, "SIGKILL");
      } catch {
        // already gone
      }
    }
    const outcome = await inFlight;
    expect(outcome).toBeInstanceOf(Error);
    expect((outcome as Error).message).toMatch(/upstream/i);
    const echoed = await waitFor(async () => textOf(await client.callTool({ name: "echo", arguments: { text: "back" } })), {
      timeoutMs: 15_000,
      intervalMs: 200,
      what: "a call to succeed after the upstream restarted",
    });
    expect(echoed).toContain("back");
    await client.close();
  });
});
