import { mkdtempSync, writeFileSync, readdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { formatProblems, loadConfig, type LoadConfigResult, type UpstreamConfigInput } from "../../src/config/load.js";
import type { Config } from "../../src/config/schema.js";

const ROOT = resolve(import.meta.dirname, "../..");
const demo: UpstreamConfigInput = { stdio: { command: "node", args: ["dist/demo/main.js"] } };

function writeConfig(yaml: string): { dir: string; file: string } {
  const dir = mkdtempSync(join(tmpdir(), "taskgate-config-"));
  writeFileSync(join(dir, "taskgate.yaml"), yaml);
  return { dir, file: "taskgate.yaml" };
}

function load(argv: string[], env: NodeJS.ProcessEnv = {}, cwd = ROOT): LoadConfigResult {
  return loadConfig({ argv, env, cwd, defaultUpstream: () => demo });
}

function ok(result: LoadConfigResult): Config {
  if (!result.ok) throw new Error(`expected ok, got:\n${formatProblems(result.problems)}`);
  return result.config;
}

function problems(result: LoadConfigResult): string[] {
  if (result.ok) throw new Error("expected problems, got a config");
  return result.problems;
}

const FILE = `
listen: { host: file-host, port: 1111 }
store: { redisUrl: redis://file:6379 }
log: { level: warn }
upstreams:
  - name: svc
    path: /svc
    http: { url: http://file.example/mcp }
    tools: { slow: { taskSupport: required } }
`;

describe("loadConfig precedence", () => {
  it("falls back to schema defaults and the default upstream with nothing given", () => {
    const config = ok(load([]));
    expect(config.listen).toEqual({ host: "127.0.0.1", port: 8080 });
    expect(config.store.redisUrl).toBeUndefined();
    expect(config.upstreams).toHaveLength(1);
    expect(config.upstreams[0]).toMatchObject({ name: "default", path: "/mcp", stdio: { command: "node", args: ["dist/demo/main.js"] } });
  });

  it("takes the file over the defaults", () => {
    const { dir, file } = writeConfig(FILE);
    const config = ok(load(["--config", file], {}, dir));
    expect(config.listen).toEqual({ host: "file-host", port: 1111 });
    expect(config.store.redisUrl).toBe("redis://file:6379");
    expect(config.log.level).toBe("warn");
    expect(config.tasks.detachAfterMs).toBe(3000);
  });

  it("takes TASKGATE_* env over the file, and finds the file through TASKGATE_CONFIG", () => {
    const { dir, file } = writeConfig(FILE);
    const env = {
      TASKGATE_CONFIG: file,
      TASKGATE_PORT: "2222",
      TASKGATE_HOST: "env-host",
      TASKGATE_REDIS_URL: "redis://env:6379",
      TASKGATE_LOG_LEVEL: "debug",
    };
    const config = ok(load([], env, dir));
    expect(config.listen).toEqual({ host: "env-host", port: 2222 });
    expect(config.store.redisUrl).toBe("redis://env:6379");
    expect(config.log.level).toBe("debug");
  });

  it("takes flags over env", () => {
    const { dir, file } = writeConfig(FILE);
    const env = { TASKGATE_CONFIG: "missing.yaml", TASKGATE_PORT: "2222", TASKGATE_HOST: "env-host", TASKGATE_LOG_LEVEL: "debug" };
    const argv = ["--config", file, "--port", "3333", "--host=flag-host", "--redis", "redis://flag:6379", "--log-level", "error"];
    const config = ok(load(argv, env, dir));
    expect(config.listen).toEqual({ host: "flag-host", port: 3333 });
    expect(config.store.redisUrl).toBe("redis://flag:6379");
    expect(config.log.level).toBe("error");
  });

  it("names a Redis Cluster by env or flag, which replaces the file's redisUrl; and a flag's URL replaces the file's cluster", () => {
    const { dir, file } = writeConfig(FILE);
    const fromEnv = ok(load([], { TASKGATE_CONFIG: file, TASKGATE_REDIS_CLUSTER: "10.0.0.1:7000, 10.0.0.2:7000,,redis://10.0.0.3:7000" }, dir));
    expect(fromEnv.store).toMatchObject({ cluster: ["10.0.0.1:7000", "10.0.0.2:7000", "redis://10.0.0.3:7000"] });
    expect(fromEnv.store.redisUrl).toBeUndefined();
    const fromFlag = ok(load(["--config", file, "--redis-cluster", "a:1,b:2"], {}, dir));
    expect(fromFlag.store.cluster).toEqual(["a:1", "b:2"]);
    expect(fromFlag.store.redisUrl).toBeUndefined();
    const urlOverCluster = writeConfig("store: { cluster: [c:1] }\nupstreams: [{ name: a, path: /mcp, http: { url: http://a.example/mcp } }]\n");
    expect(ok(load(["--config", urlOverCluster.file, "--redis", "redis://flag:6379"], {}, urlOverCluster.dir)).store).toMatchObject({
      redisUrl: "redis://flag:6379",
    });
    expect(ok(load(["--config", urlOverCluster.file, "--redis", "redis://flag:6379"], {}, urlOverCluster.dir)).store.cluster).toBeUndefined();
  });

  it("refuses a cluster and a URL named together, and a cluster list without a port", () => {
    expect(problems(load(["--redis", "redis://x:6379"], { TASKGATE_REDIS_CLUSTER: "a:1" })).join("\n")).toMatch(
      /one of store.redisUrl, store.cluster and store.sentinel, not redisUrl and cluster/,
    );
    expect(problems(load([], { TASKGATE_REDIS_CLUSTER: "just-a-host" })).join("\n")).toMatch(/store.cluster/);
    expect(problems(load(["--redis-cluster", ","])).join("\n")).toMatch(/store.cluster/);
  });

  it("takes Redis Sentinel from TASKGATE_REDIS_SENTINEL and from --redis-sentinel, credentials and TLS included", () => {
    const fromEnv = ok(load([], { TASKGATE_REDIS_SENTINEL: "rediss+sentinel://app:s%40cret@10.0.0.1:26379,10.0.0.2:26380/mymaster" }));
    expect(fromEnv.store.sentinel).toEqual({ name: "mymaster", nodes: ["10.0.0.1:26379", "10.0.0.2:26380"], username: "app", password: "s@cret", tls: true });
    expect(fromEnv.store.redisUrl).toBeUndefined();
    const fromFlag = ok(load(["--redis-sentinel", "redis+sentinel://h:1/primary"]));
    expect(fromFlag.store.sentinel).toEqual({ name: "primary", nodes: ["h:1"], tls: false });
    expect(problems(load(["--redis-sentinel", "redis+sentinel://h:1/primary"], { TASKGATE_REDIS_URL: "redis://x:6379" })).join("\n")).toMatch(
      /not redisUrl and sentinel/,
    );
    expect(problems(load(["--redis-sentinel", "redis://h:1"])).join("\n")).toMatch(/--redis-sentinel: expected redis\+sentinel:\/\//);
  });

  it("waits for the replicas the topology lists by default, within a second", () => {
    const config = ok(load([]));
    expect(config.store.waitForReplicas).toBe("listed");
    expect(config.store.waitTimeoutMs).toBe(1000);
    expect(config.store.waitForAof).toBe("auto");
  });

  it("takes store.waitForAof as auto, true or false, and nothing else", () => {
    const config = (yaml: string) => {
      const { dir, file } = writeConfig(yaml);
      return load(["--config", file], {}, dir);
    };
    const upstreams = "upstreams:\n  - { name: svc, path: /svc, http: { url: http://file.example/mcp } }\n";
    expect(ok(config(`store: { waitForAof: false }\n${upstreams}`)).store.waitForAof).toBe(false);
    expect(ok(config(`store: { waitForAof: true }\n${upstreams}`)).store.waitForAof).toBe(true);
    expect(problems(config(`store: { waitForAof: always }\n${upstreams}`)).join("\n")).toMatch(/store\.waitForAof/);
  });

  it("treats an empty env variable as unset", () => {
    expect(ok(load([], { TASKGATE_PORT: "", TASKGATE_HOST: "" })).listen).toEqual({ host: "127.0.0.1", port: 8080 });
  });
});

describe("loadConfig --upstream", () => {
  it("splits stdio:<command line> like a shell, without running one", () => {
    const config = ok(load(["--upstream", `stdio:node "my server.js" --name 'a b' $NAME`], { NAME: "x" }));
    expect(config.upstreams).toHaveLength(1);
    expect(config.upstreams[0]).toMatchObject({ name: "default", path: "/mcp", stdio: { command: "node", args: ["my server.js", "--name", "a b", "x"] } });
  });

  it("accepts an http(s) URL, also from TASKGATE_UPSTREAM", () => {
    expect(ok(load(["--upstream", "https://up.example/mcp"])).upstreams[0]?.http?.url).toBe("https://up.example/mcp");
    expect(ok(load([], { TASKGATE_UPSTREAM: "http://demo:3001/mcp" })).upstreams[0]?.http?.url).toBe("http://demo:3001/mcp");
  });

  it("replaces the first upstream's transport and keeps its name, path and tools", () => {
    const { dir, file } = writeConfig(FILE);
    const [first] = ok(load(["--config", file, "--upstream", "stdio:./server --fast"], {}, dir)).upstreams;
    expect(first).toMatchObject({ name: "svc", path: "/svc", stdio: { command: "./server", args: ["--fast"] }, tools: { slow: { taskSupport: "required" } } });
    expect(first?.http).toBeUndefined();
  });

  it("creates the upstream default when the file has none", () => {
    const { dir, file } = writeConfig("listen: { port: 9000 }\n");
    const config = ok(load(["--config", file, "--upstream", "http://127.0.0.1:3001/mcp"], {}, dir));
    expect(config.upstreams).toEqual([
      expect.objectContaining({ name: "default", path: "/mcp", http: expect.objectContaining({ url: "http://127.0.0.1:3001/mcp" }) }),
    ]);
  });

  it("refuses shell operators, an empty command and other schemes", () => {
    expect(problems(load(["--upstream", "stdio:server | tee log"]))).toEqual([expect.stringMatching(/^--upstream: .*operator "\|"/)]);
    expect(problems(load(["--upstream", "stdio:server > out"]))).toEqual([expect.stringMatching(/operator ">"/)]);
    expect(problems(load(["--upstream", "stdio:  "]))).toEqual([expect.stringMatching(/needs a command line/)]);
    expect(problems(load([], { TASKGATE_UPSTREAM: "ftp://x" }))).toEqual([expect.stringMatching(/^TASKGATE_UPSTREAM: expected "stdio:/)]);
  });
});

describe("loadConfig problems", () => {
  it("names every problem of a bad file with its path, not just the first", () => {
    const { dir, file } = writeConfig(`
listen: { port: "8080", colour: blue }
tasks: { detachAfterMs: -1, pollIntervalMs: 1.5 }
log: { level: loud }
upstreams:
  - name: a
    stdio: { command: "" }
`);
    expect(problems(load(["--config", file], {}, dir)).sort()).toEqual(
      [
        "listen.port: Invalid input: expected number, received string",
        "listen.colour: unknown key",
        "tasks.detachAfterMs: Too small: expected number to be >=0",
        "tasks.pollIntervalMs: Invalid input: expected int, received number",
        'log.level: Invalid option: expected one of "fatal"|"error"|"warn"|"info"|"debug"|"trace"|"silent"',
        "upstreams.0.stdio.command: Too small: expected string to have >=1 characters",
      ].sort(),
    );
  });

  it("takes isolation: per-call on an HTTP upstream (a session per call), and refuses a requestStateSecret too short to sign with", () => {
    const { dir, file } = writeConfig(`
tasks: { requestStateSecret: short }
upstreams:
  - http: { url: http://x.example/mcp }
    isolation: per-call
`);
    expect(problems(load(["--config", file], {}, dir))).toEqual(["tasks.requestStateSecret: Too small: expected string to have >=32 characters"]);
  });

  it("keeps forwarding the client's Authorization off unless an HTTP upstream turns it on, and refuses it under stdio", () => {
    const on = writeConfig(
      "upstreams:\n  - http: { url: http://x.example/mcp, forwardAuthorization: true }\n  - { name: b, path: /b, http: { url: http://y.example/mcp } }\n",
    );
    const upstreams = ok(load(["--config", on.file], {}, on.dir)).upstreams;
    expect(upstreams.map((u) => u.http?.forwardAuthorization)).toEqual([true, false]);
    const stdio = writeConfig("upstreams:\n  - stdio: { command: node, forwardAuthorization: true }\n");
    expect(problems(load(["--config", stdio.file], {}, stdio.dir))).toEqual(["upstreams.0.stdio.forwardAuthorization: unknown key"]);
  });

  it("reports a YAML syntax error with its line and column", () => {
    const { dir, file } = writeConfig("listen:\n  port: 8080\n  port: 9090\n");
    expect(problems(load(["--config", file], {}, dir))).toEqual(["taskgate.yaml:3:3: Map keys must be unique"]);
    const unclosed = writeConfig("listen: { port: 8080 }\nupstreams: [\n");
    expect(problems(load(["--config", unclosed.file], {}, unclosed.dir))).toEqual([expect.stringMatching(/^taskgate\.yaml:3:1: Flow sequence/)]);
  });

  it("reports a missing file by the name it was given", () => {
    expect(problems(load(["--config", "nowhere.yaml"]))).toEqual([expect.stringMatching(/^nowhere\.yaml: cannot read the file \(ENOENT\)/)]);
  });

  it("reports every unknown flag, missing value and stray argument", () => {
    expect(problems(load(["--colour", "blue", "--port", "--verbose", "-x", "--redis=", "--upstream"]))).toEqual([
      "unknown flag --colour",
      'unexpected argument "blue"',
      "--port needs a value",
      "unknown flag --verbose",
      "unknown flag -x",
      "--redis needs a value",
      "--upstream needs a value",
    ]);
  });

  it("names TASKGATE_PORT when it is not a number, and --port likewise", () => {
    expect(problems(load([], { TASKGATE_PORT: "abc" }))).toEqual(['TASKGATE_PORT: expected a port number, got "abc"']);
    expect(problems(load(["--port", "80a"]))).toEqual(['--port: expected a port number, got "80a"']);
    expect(problems(load(["--port", "70000"]))).toEqual(["listen.port: Too big: expected number to be <=65535"]);
  });

  it("still reports the file's problems alongside a bad flag", () => {
    const { dir, file } = writeConfig("listen: { host: 7 }\nupstreams: [{ http: { url: http://x/mcp } }]\n");
    expect(problems(load(["--config", file, "--port", "x"], {}, dir))).toEqual([
      '--port: expected a port number, got "x"',
      "listen.host: Invalid input: expected string, received number",
    ]);
  });

  it("formats problems as one list for the CLI", () => {
    expect(formatProblems(["a: b", "c: d"])).toBe("  - a: b\n  - c: d");
  });
});

describe("example configs", () => {
  const examples = readdirSync(join(ROOT, "config")).filter((f) => f.endsWith(".yaml"));

  it("exist", () => {
    expect(examples).toEqual(expect.arrayContaining(["taskgate.example.yaml", "http-upstream.example.yaml", "demo-stdio.yaml"]));
  });

  it.each(examples)("%s loads without problems", (name) => {
    // A file that turns the admin listener on takes its token from the environment, as deployed.
    const config = ok(load(["--config", join("config", name)], { TASKGATE_ADMIN_TOKEN: "t".repeat(32) }));
    expect(config.upstreams.length).toBeGreaterThan(0);
  });

  it("demo-stdio.yaml runs the demo server and requires a task for deploy", () => {
    const [demoUpstream] = ok(load(["--config", "config/demo-stdio.yaml"])).upstreams;
    expect(demoUpstream?.stdio).toMatchObject({ command: "node", args: ["dist/demo/main.js"] });
    expect(demoUpstream?.tools["deploy"]?.taskSupport).toBe("required");
  });
});

describe("the admin listener's settings", () => {
  it("is off by default, and needs a token of at least 16 characters once admin.port is set", () => {
    expect(ok(load([])).admin).toEqual({ host: "127.0.0.1", recentWindowMs: 900_000 });
    const { dir, file } = writeConfig("admin: { port: 9090 }\nupstreams: [{ http: { url: http://up.example/mcp } }]\n");
    expect(problems(load(["--config", file], {}, dir)).join("\n")).toMatch(/admin\.token.*required/);
    expect(problems(load(["--config", file], { TASKGATE_ADMIN_TOKEN: "short" }, dir)).join("\n")).toMatch(/admin\.token/);
    expect(ok(load(["--config", file], { TASKGATE_ADMIN_TOKEN: "a-long-enough-admin-token" }, dir)).admin).toEqual({
      host: "127.0.0.1",
      port: 9090,
      token: "a-long-enough-admin-token",
      recentWindowMs: 900_000,
    });
  });
});
