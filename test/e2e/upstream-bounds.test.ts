import { randomBytes } from "node:crypto";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { modern, WITH_TASKS } from "../helpers/modern.js";
import { ROOT, runNode, startGateway, type GatewayProcess, type RunningProcess } from "../helpers/processes.js";
import { untilStatus } from "../helpers/until.js";
import { waitFor } from "../helpers/wait-for.js";

const ODD = join(ROOT, "test/fixtures/odd-server.mjs");
const LIMIT = 64 * 1024;

/** The odd fixture over Streamable HTTP, as its own process. */
async function startOddHttp(): Promise<RunningProcess & { url: string }> {
  const running = runNode([ODD, "http"]);
  const port = await waitFor(() => /listening (\d+)/.exec(running.output())?.[1], { timeoutMs: 10_000, what: "the odd fixture listening" });
  return { ...running, url: `http://127.0.0.1:${port}/mcp` };
}

/**
 * What an upstream sends is bounded: nesting, one message's size. An answer beyond a bound fails
 * its own call at once with an error naming the setting, and the gateway serves on.
 */
describe("bounds on what upstreams send", () => {
  let gw: GatewayProcess;
  let oddHttp: RunningProcess & { url: string };
  beforeAll(async () => {
    oddHttp = await startOddHttp();
    const tools = { deep_task: { taskSupport: "required" as const } };
    gw = await startGateway({
      store: { redisUrl: inject("redisUrl"), keyPrefix: `t${randomBytes(4).toString("hex")}:` },
      // A lease far longer than any wait below: a task failed here was failed by its owner, not the reaper.
      tasks: { leaseMs: 120_000 },
      upstreams: [
        { name: "odd-stdio", path: "/stdio", stdio: { command: process.execPath, args: [ODD, "stdio"], maxLineBytes: LIMIT }, tools },
        { name: "odd-http", path: "/http", http: { url: oddHttp.url, maxMessageBytes: LIMIT }, tools },
      ],
    });
  }, 30_000);
  afterAll(async () => {
    await gw?.stop();
    await oddHttp?.stop();
  });

  const call = (path: string, name: string, args: Record<string, unknown> = {}, capabilities: Record<string, unknown> = {}) =>
    modern(`${gw.url}${path}`, "tools/call", { name, arguments: args }, { capabilities });

  for (const [path, transport] of [
    ["/stdio", "stdio"],
    ["/http", "http"],
  ] as const) {
    describe(transport, () => {
      it("fails a call answered 5,000 levels deep, naming maxJsonDepth, and serves on", async () => {
        const answer = await call(path, "deep", { depth: 5000 });
        expect(answer.body.error?.message).toContain(`upstreams[].${transport}.maxJsonDepth`);
        expect(answer.body.error?.message).toContain("nested deeper than 256 levels");
        expect((await call(path, "echo", { text: "still here" })).body.result.content[0].text).toBe("Echo: still here");
      });

      it("fails a task answered too deep at once, by its owner, saying why", async () => {
        const created = (await call(path, "deep_task", { depth: 5000 }, WITH_TASKS)).body.result;
        expect(created).toMatchObject({ resultType: "task" });
        const failed = await untilStatus(gw.url + path, created.taskId, "failed", { timeoutMs: 20_000 });
        expect(failed.statusMessage).toContain(`upstreams[].${transport}.maxJsonDepth`);
        expect(failed.statusMessage).not.toMatch(/replica/);
      });

      it("fails a call whose answer is over the size bound, naming the setting", async () => {
        const setting = transport === "stdio" ? "upstreams[].stdio.maxLineBytes" : "upstreams[].http.maxMessageBytes";
        const answer = await call(path, "long", { bytes: 2 * LIMIT });
        expect(answer.body.error?.message).toContain(setting);
        expect(answer.body.error?.message).toContain(String(LIMIT));
        // Just under the bound passes, and the next call is served.
        const fits = await call(path, "long", { bytes: LIMIT - 1024 });
        expect(fits.body.result.content[0].text).toHaveLength(LIMIT - 1024);
      });

      it("fails a call answered with a result of the wrong shape, saying what was wrong", async () => {
        const answer = await call(path, "wrong_shape");
        expect(answer.body.error?.message).toContain("expected record, received array");
        expect((await call(path, "echo", { text: "after" })).body.result.content[0].text).toBe("Echo: after");
      });
    });
  }
});
