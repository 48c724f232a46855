import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { StdioConnector } from "../../src/upstream/stdio/stdio-connector.js";
import { ROOT, stdioConfig, testLogger, textOf } from "../fixtures/upstreams.js";
import { waitFor } from "../helpers/wait-for.js";

const ODD = join(ROOT, "test/fixtures/odd-server.mjs");
const MiB = 1024 * 1024;

/** Writes to a stdio child wait for it to read ('drain'): a child that stops reading holds up its writers, not taskgate's memory. */
describe("stdio connector writing to a child that stops reading", () => {
  const open: StdioConnector[] = [];
  afterEach(async () => {
    await Promise.all(open.splice(0).map((c) => c.close()));
  });

  it("keeps at most about one message unread in the pipe's buffer, and delivers every message once the child reads again", async () => {
    const c = new StdioConnector("odd", stdioConfig([ODD, "stdio"], { maxLineBytes: 4 * MiB }), testLogger);
    open.push(c);
    await c.start();
    const call = (name: string, args: Record<string, unknown> = {}) => c.request({ method: "tools/call", params: { name, arguments: args } });
    expect(textOf(await call("stall"))).toBe("stalled");

    // 32 MiB for a child that reads nothing: without waiting for 'drain', all of it is queued at once.
    const text = "y".repeat(MiB);
    const calls = Array.from({ length: 32 }, () => call("echo", { text }));
    await waitFor(() => c.unreadBytes() > MiB, { what: "the pipe to fill" });
    for (let turn = 0; turn < 20; turn++) {
      await new Promise((r) => setImmediate(r));
      expect(c.unreadBytes()).toBeLessThan(3 * MiB);
    }

    process.kill(c.pid()!, "SIGUSR2");
    const answers = await Promise.all(calls);
    expect(answers.map((a) => textOf(a).length)).toEqual(Array(32).fill(`Echo: ${text}`.length));
  }, 60_000);
});
