import { randomBytes } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { parse, parseAllDocuments, stringify } from "yaml";
import { ConfigSchema } from "../../src/config/schema.js";
import { modern, WITH_TASKS } from "../helpers/modern.js";
import { freePort } from "../helpers/ports.js";
import { ROOT, runNode, type RunningProcess } from "../helpers/processes.js";
import { waitFor } from "../helpers/wait-for.js";

const docs = parseAllDocuments(readFileSync(join(ROOT, "deploy/kubernetes/sidecar.yaml"), "utf8")).map((d) => d.toJS() as any);
const configText: string = docs.find((d) => d.kind === "ConfigMap").data["taskgate.yaml"];
const pod = docs.find((d) => d.kind === "Deployment").spec.template.spec;
const taskgate = pod.containers.find((c: any) => c.name === "taskgate");
const server = pod.containers.find((c: any) => c.name === "mcp-server");
const service = docs.find((d) => d.kind === "Service");
const config = ConfigSchema.parse({ ...parse(configText), admin: { ...parse(configText).admin, token: "x".repeat(32) } });
/** The image runs `ENTRYPOINT` + the container's args. */
const entrypoint: string[] = JSON.parse(/^ENTRYPOINT (.*)$/m.exec(readFileSync(join(ROOT, "Dockerfile"), "utf8"))![1]!);
const preStopMs = (c: any) => Number(c.lifecycle.preStop.exec.command.at(-1)) * 1000;
const portOf = (c: any, name: string) => c.ports.find((p: any) => p.name === name).containerPort;

// docs/guides/kubernetes-sidecar.md: an ops-managed sidecar. The pod's own file is checked for consistency, then
// its containers' commands run here (ports moved to free ones, Redis to the test's) and probed.
describe("recipe: taskgate as a sidecar next to an MCP server in one pod", () => {
  it("probes the ports and paths the configuration listens on", () => {
    expect(portOf(taskgate, "http")).toBe(config.listen.port);
    for (const probe of [taskgate.startupProbe, taskgate.livenessProbe]) expect(probe.httpGet).toEqual({ path: "/livez", port: "http" });
    expect(taskgate.readinessProbe.httpGet).toEqual({ path: "/readyz", port: "http" });
    expect(service.spec.ports[0].targetPort).toBe("http");
    // The upstream is the server next to it, on the pod's loopback, at the port its command names.
    const upstream = new URL(config.upstreams[0]!.http!.url);
    expect(upstream.hostname).toBe("127.0.0.1");
    expect(server.args).toEqual(expect.arrayContaining(["--http", upstream.port, "--host", "127.0.0.1"]));
  });

  it("leaves time to drain: preStop + drainMs within the grace period, the server alive until taskgate is done", () => {
    const graceMs = pod.terminationGracePeriodSeconds * 1000;
    expect(preStopMs(taskgate) + config.tasks.drainMs).toBeLessThan(graceMs);
    expect(preStopMs(server)).toBeGreaterThanOrEqual(preStopMs(taskgate) + config.tasks.drainMs);
    expect(preStopMs(server)).toBeLessThan(graceMs);
  });

  describe("run from the pod's own commands", () => {
    let dir: string;
    let upstream: RunningProcess;
    let gateway: RunningProcess;
    let url: string;
    beforeAll(async () => {
      dir = mkdtempSync(join(tmpdir(), "taskgate-sidecar-"));
      const [serverPort, port, adminPort] = await Promise.all([freePort(), freePort(), freePort()]);
      const serverArgs = (server.args as string[]).map((a) => (a === new URL(config.upstreams[0]!.http!.url).port ? String(serverPort) : a));
      upstream = runNode([join(ROOT, entrypoint.at(-1)!), ...serverArgs]);
      const raw = parse(configText);
      raw.listen = { host: "127.0.0.1", port };
      raw.admin = { ...raw.admin, port: adminPort };
      raw.store = { ...raw.store, redisUrl: inject("redisUrl"), keyPrefix: `t${randomBytes(4).toString("hex")}:` };
      raw.upstreams[0].http.url = raw.upstreams[0].http.url.replace(/:\d+\//, `:${serverPort}/`);
      const file = join(dir, "taskgate.yaml");
      writeFileSync(file, stringify(raw));
      const args = (taskgate.args as string[]).map((a) => (a.endsWith("taskgate.yaml") ? file : a));
      gateway = runNode([join(ROOT, entrypoint.at(-1)!), ...args], { TASKGATE_ADMIN_TOKEN: "x".repeat(32) });
      url = `http://127.0.0.1:${port}`;
    });
    afterAll(async () => {
      await gateway?.stop("SIGKILL");
      await upstream?.stop();
      rmSync(dir, { recursive: true, force: true });
    });

    it("passes its startup, liveness and readiness probes, then drains a running task on SIGTERM and exits 0", async () => {
      const probe = (p: any) =>
        fetch(`${url}${p.httpGet.path}`).then(
          (r) => r.status,
          () => 0,
        );
      await waitFor(async () => (await probe(taskgate.startupProbe)) === 200, { timeoutMs: 30_000, what: "startup probe" });
      expect(await probe(taskgate.livenessProbe)).toBe(200);
      await waitFor(async () => (await probe(taskgate.readinessProbe)) === 200, { timeoutMs: 30_000, what: "readiness probe" });
      const created = (await modern(`${url}/mcp`, "tools/call", { name: "sleep", arguments: { seconds: 10 } }, { capabilities: WITH_TASKS })).body.result;
      expect(created.resultType).toBe("task");
      const exited = new Promise<number | null>((resolve) => gateway.proc.once("exit", (code) => resolve(code)));
      gateway.proc.kill("SIGTERM");
      // Out of the Service's endpoints at once, while the call (10 s) still runs.
      await waitFor(async () => (await probe(taskgate.readinessProbe)) === 503, { what: "readiness failing while draining" });
      expect(await exited).toBe(0);
      // The process is gone once its last call ended: its own log says how that call ended.
      const ended = gateway
        .output()
        .split("\n")
        .filter((l) => l.includes('"task ended"'))
        .map((l) => JSON.parse(l));
      expect(ended).toEqual([expect.objectContaining({ taskId: created.taskId, status: "completed" })]);
    }, 90_000);
  });
});
