import { spawn } from "node:child_process";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ROOT, startDemoHttp, startGateway, type GatewayProcess, type RunningProcess } from "../helpers/processes.js";
import { waitFor } from "../helpers/wait-for.js";

const LONG_SECONDS = 2.5;
const MASTRA = join(ROOT, "test/fixtures/mastra-client.mjs");

/** The path of a Node 24 binary, from the registry's `node` package (as the README's newer-Node recipe runs it). */
function node24(): Promise<string> {
  return new Promise((resolve, reject) => {
    const npx = spawn("npx", ["-y", "-p", "node@24", "-c", "command -v node"], { stdio: ["ignore", "pipe", "inherit"] });
    let out = "";
    npx.stdout.on("data", (chunk: Buffer) => (out += chunk.toString()));
    npx.once("error", reject);
    npx.once("exit", (code) => (code === 0 && out.trim() ? resolve(out.trim()) : reject(new Error(`npx -p node@24 exited ${code}: ${out}`))));
  });
}

/** Runs the Mastra client script's steps against `url` on `node`: one parsed JSON line per step. */
function mastra(node: string, url: string, steps: unknown[], confirm = false): Promise<Array<{ names?: string[]; text?: string }>> {
  return new Promise((resolve, reject) => {
    const args = [MASTRA, url, JSON.stringify(steps), ...(confirm ? ["--confirm"] : [])];
    const child = spawn(node, args, { stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    let err = "";
    child.stdout.on("data", (chunk: Buffer) => (out += chunk.toString()));
    child.stderr.on("data", (chunk: Buffer) => (err += chunk.toString()));
    const timer = setTimeout(() => child.kill("SIGKILL"), 60_000);
    child.once("exit", (code) => {
      clearTimeout(timer);
      if (code !== 0) return reject(new Error(`mastra client exited ${code}: ${err.slice(-2000)}`));
      resolve(
        out
          .split("\n")
          .filter((line) => line.startsWith("{"))
          .map((line) => JSON.parse(line)),
      );
    });
  });
}

/**
 * @mastra/mcp (2.0.0; it and @mastra/core need Node 22.13 or later): its MCPClient on Node 24
 * from the registry, against the same server direct and through taskgate.
 */
describe("@mastra/mcp through taskgate", () => {
  let demo: RunningProcess & { mcpUrl: string };
  let gw: GatewayProcess;
  let node: string;
  beforeAll(async () => {
    [demo, node] = await Promise.all([startDemoHttp(), node24()]);
    const upstream = { http: { url: demo.mcpUrl } };
    gw = await startGateway({
      upstreams: [
        { name: "demo", path: "/mcp", ...upstream },
        { name: "handled", path: "/handle", ...upstream, unawareClients: "handle", tools: { sleep: { detachAfterMs: 300 } } },
      ],
    });
  }, 120_000);
  afterAll(async () => {
    await gw?.stop();
    await demo?.stop();
  });

  it("lists, calls (a long call included) and answers a question as it does direct", { timeout: 60_000 }, async () => {
    const steps = [
      ["list"],
      ["call", "echo", { text: "hello" }],
      ["call", "sleep", { seconds: LONG_SECONDS }],
      ["call", "deploy", { service: "billing", seconds: 0.2 }],
    ];
    const [direct, through] = await Promise.all([mastra(node, demo.mcpUrl, steps, true), mastra(node, gw.mcpUrl, steps, true)]);
    expect(through).toEqual(direct);
    expect(through.map((s) => s.names ?? s.text)).toEqual([
      expect.arrayContaining(["echo", "sleep", "deploy"]),
      "hello",
      `Slept ${LONG_SECONDS} s`,
      "Deployed billing",
    ]);
  });

  it("gets a task handle in handle mode and follows it with the gateway tools", { timeout: 60_000 }, async () => {
    const [listed, detached] = await mastra(node, `${gw.url}/handle`, [["list"], ["call", "sleep", { seconds: 1 }]]);
    expect(listed?.names).toEqual(expect.arrayContaining(["taskgate_status", "taskgate_result"]));
    // Mastra gives the structuredContent in place of the text: it says what to call next on its own.
    const handle = JSON.parse(detached?.text ?? "{}");
    const taskId = handle.taskId;
    expect(handle.next?.[1], detached?.text).toEqual({ tool: "taskgate_result", arguments: { taskId }, purpose: expect.any(String) });
    const result = await waitFor(
      async () => {
        const [step] = await mastra(node, `${gw.url}/handle`, [["call", "taskgate_result", { taskId }]]);
        return step?.text === "Slept 1 s" ? step.text : undefined;
      },
      { timeoutMs: 30_000, intervalMs: 200, what: "the task's result through Mastra" },
    );
    expect(result).toBe("Slept 1 s");
  });
});
