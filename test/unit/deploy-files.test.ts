import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { parseAllDocuments } from "yaml";
import { loadConfig } from "../../src/config/load.js";

const ROOT = resolve(import.meta.dirname, "../..");
const K8S = join(ROOT, "deploy/kubernetes");

const documents = readdirSync(K8S)
  .filter((f) => f.endsWith(".yaml"))
  .flatMap((file) => parseAllDocuments(readFileSync(join(K8S, file), "utf8")).map((d) => ({ file, doc: d.toJS() as any })));
const deployments = documents.filter((d) => d.doc?.kind === "Deployment");
const taskgateContainers = deployments.flatMap(({ file, doc }) =>
  (doc.spec.template.spec.containers as any[]).filter((c) => c.args?.includes("--config")).map((c) => ({ file, pod: doc.spec.template.spec, container: c })),
);

describe("the deployment files", () => {
  it("run taskgate in a sidecar and in a shared Deployment with several replicas and Redis", () => {
    expect(taskgateContainers.map((t) => t.file).sort()).toEqual(["shared.yaml", "sidecar.yaml"]);
    const shared = deployments.find((d) => d.file === "shared.yaml" && d.doc.metadata.name === "taskgate");
    expect(shared?.doc.spec.replicas).toBeGreaterThan(1);
    expect(documents.some((d) => d.doc?.kind === "StatefulSet" && d.doc.spec.template.spec.containers[0].image.startsWith("redis"))).toBe(true);
    const sidecarPod = taskgateContainers.find((t) => t.file === "sidecar.yaml")?.pod;
    expect(sidecarPod?.containers).toHaveLength(2);
  });

  it("probe /livez and /readyz, give time to drain, and take the admin token from a Secret", () => {
    for (const { pod, container } of taskgateContainers) {
      expect(container.livenessProbe.httpGet.path).toBe("/livez");
      expect(container.readinessProbe.httpGet.path).toBe("/readyz");
      expect(pod.terminationGracePeriodSeconds).toBeGreaterThanOrEqual(30);
      expect(container.env.find((e: any) => e.name === "TASKGATE_ADMIN_TOKEN")?.valueFrom?.secretKeyRef).toBeDefined();
    }
  });

  it("let a SIGTERM'd replica's preStop pause, drain and hand-over end within its grace period", () => {
    const dir = mkdtempSync(join(tmpdir(), "taskgate-deploy-"));
    try {
      for (const { file, pod, container } of taskgateContainers) {
        const map = documents.find((d) => d.doc?.kind === "ConfigMap" && d.file === file)!.doc;
        writeFileSync(join(dir, "taskgate.yaml"), map.data["taskgate.yaml"]);
        const loaded = loadConfig({
          argv: ["--config", "taskgate.yaml"],
          env: { TASKGATE_ADMIN_TOKEN: "x".repeat(32) },
          cwd: dir,
          defaultUpstream: () => ({}),
        });
        if (!loaded.ok) throw new Error(loaded.problems.join("\n"));
        const preStopS = Number(container.lifecycle?.preStop?.exec?.command?.[1] ?? 0);
        // The hand-over after the drain and the close take about 1.5 s in test/e2e/rolling-restart.test.ts: 10 s spare.
        expect(preStopS + loaded.config.tasks.drainMs / 1000 + 10, file).toBeLessThanOrEqual(pod.terminationGracePeriodSeconds);
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("hold taskgate configurations that the schema accepts", () => {
    const configs = documents.filter((d) => d.doc?.kind === "ConfigMap").map((d) => d.doc.data["taskgate.yaml"] as string);
    expect(configs).toHaveLength(2);
    const dir = mkdtempSync(join(tmpdir(), "taskgate-deploy-"));
    try {
      for (const text of configs) {
        writeFileSync(join(dir, "taskgate.yaml"), text);
        const loaded = loadConfig({
          argv: ["--config", "taskgate.yaml"],
          env: { TASKGATE_ADMIN_TOKEN: "x".repeat(32) },
          cwd: dir,
          defaultUpstream: () => ({}),
        });
        expect(loaded.ok ? [] : loaded.problems).toEqual([]);
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("run docker compose on a configuration the schema accepts, with the admin listener published on loopback only", () => {
    const compose = parseAllDocuments(readFileSync(join(ROOT, "docker-compose.yaml"), "utf8"))[0]!.toJS() as any;
    const taskgate = compose.services.taskgate;
    const file = taskgate.command[taskgate.command.indexOf("--config") + 1] as string;
    const loaded = loadConfig({ argv: ["--config", file], env: { TASKGATE_ADMIN_TOKEN: "x".repeat(32) }, cwd: ROOT, defaultUpstream: () => ({}) });
    if (!loaded.ok) throw new Error(loaded.problems.join("\n"));
    const { config } = loaded;
    // The file lives where the image copies config/ to, and names the compose services by host.
    expect(readFileSync(join(ROOT, "Dockerfile"), "utf8")).toMatch(/^COPY config \.\/config$/m);
    expect(Object.keys(compose.services)).toEqual(
      expect.arrayContaining([new URL(config.store.redisUrl!).hostname, new URL((config.upstreams[0] as any).http.url).hostname]),
    );
    expect(taskgate.ports).toEqual(expect.arrayContaining([`127.0.0.1:${config.admin.port}:${config.admin.port}`, "127.0.0.1:8080:8080"]));
    expect(taskgate.ports.every((p: string) => p.startsWith("127.0.0.1:"))).toBe(true);
    expect(taskgate.environment.TASKGATE_ADMIN_TOKEN).toMatch(/^\$\{TASKGATE_ADMIN_TOKEN:\?/);
  });

  it("keep the image's user numeric, so runAsNonRoot can verify it", () => {
    const dockerfile = readFileSync(join(ROOT, "Dockerfile"), "utf8");
    expect(dockerfile).toMatch(/^USER \d+(:\d+)?$/m);
    expect(dockerfile).toMatch(/HEALTHCHECK[\s\S]*\/readyz/);
  });
});
