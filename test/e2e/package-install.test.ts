import { execFile, spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { useCleanups } from "../helpers/cleanups.js";
import { freePort } from "../helpers/ports.js";
import { ROOT } from "../helpers/processes.js";
import { waitFor } from "../helpers/wait-for.js";

const run = promisify(execFile);
const VERSION = (JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { version: string }).version;

/**
 * What a user gets from `npm install taskgate`: the tarball `npm pack` makes from this checkout
 * (its built dist/), installed into an empty folder with its dependencies from the registry (the
 * local npm cache first), then run from there, never from the checkout.
 */
describe("the npm package, installed into an empty folder", () => {
  const cleanups = useCleanups();

  it("answers --version and --help, and runs the README's try-it against its demo server", { timeout: 180_000 }, async () => {
    const dir = mkdtempSync(join(tmpdir(), "taskgate-install-"));
    cleanups.defer(() => rmSync(dir, { recursive: true, force: true }));
    // --ignore-scripts: the suite built dist/ already, and prepack's rebuild would rewrite it under
    // the other test files running it.
    const { stdout: packed } = await run("npm", ["pack", "--silent", "--ignore-scripts", "--pack-destination", dir], { cwd: ROOT });
    const tarball = join(dir, packed.trim().split("\n").at(-1) ?? "");
    expect(existsSync(tarball)).toBe(true);

    const app = join(dir, "app");
    await run("mkdir", ["-p", app]);
    writeFileSync(join(app, "package.json"), JSON.stringify({ name: "taskgate-install-check", private: true }));
    await run("npm", ["install", "--no-audit", "--no-fund", "--prefer-offline", "--omit=dev", tarball], { cwd: app, timeout: 150_000 });

    const installed = join(app, "node_modules/taskgate");
    for (const file of ["dist/cli.js", "LICENSE", "README.md", "CHANGELOG.md", "config/taskgate.example.yaml", "examples/try-it.mjs"])
      expect(existsSync(join(installed, file)), file).toBe(true);
    expect(existsSync(join(installed, "src")), "the TypeScript sources stay out of the package").toBe(false);
    expect(existsSync(join(installed, "test")), "the tests stay out of the package").toBe(false);

    const bin = join(app, "node_modules/.bin/taskgate");
    expect((await run(bin, ["--version"], { cwd: app })).stdout).toBe(`taskgate ${VERSION}\n`);
    expect((await run(bin, ["--help"], { cwd: app })).stdout).toMatch(/^Usage:\n {2}taskgate --version \| --help\n/);

    // `taskgate` alone: its bundled demo server over stdio, as in the README.
    const port = await freePort();
    const gateway = spawn(bin, ["--port", String(port)], { cwd: app, stdio: ["ignore", "ignore", "pipe"] });
    let log = "";
    gateway.stderr.on("data", (chunk: Buffer) => (log += chunk.toString()));
    const exited = new Promise<void>((r) => gateway.once("exit", () => r()));
    cleanups.defer(async () => {
      if (gateway.exitCode === null && gateway.signalCode === null) gateway.kill("SIGTERM");
      await exited;
    });
    const base = `http://127.0.0.1:${port}`;
    await waitFor(async () => (await fetch(`${base}/readyz`)).ok, { timeoutMs: 30_000, what: `the installed gateway to be ready; its log:\n${log}` });
    // Not a terminal: JSON lines.
    expect(JSON.parse(log.split("\n")[0] ?? "")).toMatchObject({ service: "taskgate" });

    const tryIt = async (...args: string[]) => {
      const { stdout } = await run(process.execPath, [join(installed, "examples/try-it.mjs"), ...args], {
        cwd: app,
        env: { ...process.env, TASKGATE_URL: `${base}/mcp`, TMPDIR: dir },
      });
      return JSON.parse(stdout).result;
    };
    const task = await tryIt("call", "sleep", '{"seconds":3.5}');
    expect(task).toMatchObject({ resultType: "task", status: "working" });
    const done = await waitFor(
      async () => {
        const got = await tryIt("get", task.taskId);
        return got.status === "working" ? undefined : got;
      },
      { timeoutMs: 20_000, intervalMs: 250, what: "the sleep task to end" },
    );
    expect(done).toMatchObject({ status: "completed", result: { content: [{ type: "text", text: "Slept 3.5 s" }] } });

    const question = await tryIt("call", "deploy", '{"service":"billing","seconds":0.1}');
    expect(question.resultType).toBe("input_required");
    expect(Object.values(question.inputRequests)).toEqual([expect.objectContaining({ method: "elicitation/create" })]);
    const answered = await tryIt("answer", '{"confirm":true}');
    expect(answered).toMatchObject({ resultType: "complete", content: [{ type: "text", text: expect.stringContaining("billing") }] });
  });
});
