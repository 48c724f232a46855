import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { checkConfigCommand } from "../../src/config/check-command.js";
import { loadConfig } from "../../src/config/load.js";
import { RETIRED_KEYS, retiredKeyProblems, type RetiredKey } from "../../src/config/retired.js";

const ROOT = resolve(import.meta.dirname, "../..");
const demo = () => ({ stdio: { command: "node", args: ["dist/demo/main.js"] } });

function dirWith(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), "taskgate-check-"));
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
  return dir;
}

function run(argv: string[], cwd: string, env: NodeJS.ProcessEnv = {}) {
  let stdout = "";
  let stderr = "";
  const code = checkConfigCommand(argv, env, cwd, demo, { stdout: (t) => (stdout += t), stderr: (t) => (stderr += t) });
  return { code, stdout, stderr };
}

const UP = "upstreams: [{ name: a, path: /a, stdio: { command: x } }]\n";

const RENAMED: RetiredKey[] = [
  { path: "tasks.leaseRenewMs", replacement: "tasks.leaseMs", since: "0.2.0", note: "the lease is renewed every third of it" },
  { path: "upstreams.*.stdio.shell", since: "0.2.0", note: "give the program and its args without a shell" },
];

describe("taskgate check-config", () => {
  it("passes the shipped example, which sets every key", () => {
    const result = run([join(ROOT, "config/taskgate.example.yaml")], ROOT);
    expect(result).toMatchObject({ code: 0, stderr: "" });
    expect(result.stdout).toContain("taskgate.example.yaml: ok");
  });

  it("lists every problem of every file and exits 2", () => {
    const dir = dirWith({
      "good.yaml": `listen: { port: 8081 }\n${UP}`,
      "bad.yaml": "listen: { port: -1 }\ntasks: { leaseMs: fast, nope: 1 }\nstore: { redisUrl: redis://a, cluster: [a:1] }\n",
    });
    const result = run(["good.yaml", "bad.yaml"], dir);
    expect(result.code).toBe(2);
    expect(result.stdout).toBe("good.yaml: ok\n");
    expect(result.stderr).toMatch(/^bad\.yaml: \d+ problems:/);
    for (const key of ["listen.port", "tasks.leaseMs", "tasks.nope: unknown key"]) expect(result.stderr).toContain(key);
  });

  it("names a file it cannot read, and refuses to run without one or with a flag it does not know", () => {
    expect(run(["missing.yaml"], dirWith({})).stderr).toContain("missing.yaml: cannot read the file (ENOENT)");
    expect(run([], ROOT)).toMatchObject({ code: 2, stderr: expect.stringContaining("Usage:") });
    expect(run(["--strict", "x.yaml"], ROOT)).toMatchObject({ code: 2, stderr: expect.stringContaining("unknown flag --strict") });
  });

  it("checks the secrets a file names against the environment it runs in", () => {
    const dir = dirWith({ "auth.yaml": 'upstreams: [{ name: a, path: /a, http: { url: "http://u.example/mcp", headers: { X-Key: "${TG_TOKEN}" } } }]\n' });
    expect(run(["auth.yaml"], dir).stderr).toContain("environment variable TG_TOKEN is not set");
    expect(run(["auth.yaml"], dir, { TG_TOKEN: "t" }).code).toBe(0);
  });
});

describe("retired keys", () => {
  it("names a retired key with its replacement instead of calling it unknown", () => {
    const dir = dirWith({
      "old.yaml": "tasks: { leaseRenewMs: 5000 }\nupstreams:\n  - { name: a, path: /a, stdio: { command: x, shell: true } }\n",
    });
    const loaded = loadConfig({ argv: ["--config", "old.yaml"], env: {}, cwd: dir, defaultUpstream: demo, retired: RENAMED });
    expect(loaded.ok).toBe(false);
    if (loaded.ok) return;
    expect(loaded.problems).toEqual([
      "tasks.leaseRenewMs: retired in taskgate 0.2.0; use tasks.leaseMs instead; the lease is renewed every third of it",
      "upstreams.0.stdio.shell: retired in taskgate 0.2.0; give the program and its args without a shell",
    ]);
  });

  it("finds nothing in a file that sets none of them", () => {
    expect(retiredKeyProblems({ tasks: { leaseMs: 1 }, upstreams: [{ stdio: {} }] }, RENAMED)).toEqual([]);
  });

  it("retires no key the shipped example still sets", () => {
    const example = readFileSync(join(ROOT, "config/taskgate.example.yaml"), "utf8");
    for (const key of RETIRED_KEYS) expect(example).not.toMatch(new RegExp(`^\\s*${key.path.split(".").at(-1)}:`, "m"));
  });
});
