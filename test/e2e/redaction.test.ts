import { createServer, request, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { admin, ADMIN_TOKEN } from "../helpers/admin.js";
import { getTask, modern, WITH_TASKS } from "../helpers/modern.js";
import { freePort } from "../helpers/ports.js";
import { startDemoHttp, startGateway, type GatewayProcess, type RunningProcess } from "../helpers/processes.js";
import { waitFor } from "../helpers/wait-for.js";

/** Secrets taskgate is given: in the URL's user and password, its query, a header and its environment. */
const CANARY = {
  user: "canaryUser7341",
  password: "canaryPass9902",
  query: "canaryQuery5518",
  header: "canaryHeader2207",
  env: "canaryEnv6630",
};

type Mode = "pass" | "401" | "redirect" | "bad" | "hang" | "drop";

/**
 * A loopback hop in front of the demo server that misbehaves on demand, and echoes what it was sent
 * (the URL with its query, the Authorization) in every answer it makes up, as error pages do.
 */
async function misbehavingUpstream(target: string) {
  const to = new URL(target);
  let mode: Mode = "pass";
  const authorizations = new Set<string>();
  const echo = (req: IncomingMessage) => `request ${req.url} with ${req.headers.authorization}`;
  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    authorizations.add(String(req.headers.authorization));
    if (mode === "hang") return;
    if (mode === "drop") return req.socket.destroy();
    if (mode === "401") return res.writeHead(401, { "content-type": "text/plain" }).end(`Unauthorized: ${echo(req)}`);
    if (mode === "redirect") return res.writeHead(302, { location: `/login?next=${encodeURIComponent(req.url ?? "")}` }).end(`Moved: ${echo(req)}`);
    if (mode === "bad") return res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ echo: echo(req) }));
    const upstream = request({ host: to.hostname, port: to.port, path: req.url, method: req.method, headers: req.headers }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    upstream.on("error", () => res.destroy());
    req.pipe(upstream);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    port: (server.address() as AddressInfo).port,
    authorizations,
    /** Each request is answered by the mode of its arrival; streams already open carry on. */
    set: (next: Mode) => (mode = next),
    close: () => new Promise<void>((resolve) => (server.closeAllConnections(), server.close(() => resolve()))),
  };
}

describe("redaction: a secret given to taskgate in an upstream URL, header or environment is never written", () => {
  let demo: RunningProcess & { mcpUrl: string };
  let hop: Awaited<ReturnType<typeof misbehavingUpstream>>;
  let gw: GatewayProcess;
  let adminUrl: string;
  /** Every answer taskgate gave, to clients and operators, as text. */
  const answers: string[] = [];
  const seen = (what: string, value: unknown) => {
    answers.push(`${what}: ${typeof value === "string" ? value : JSON.stringify(value)}`);
    return value;
  };

  beforeAll(async () => {
    demo = await startDemoHttp();
    hop = await misbehavingUpstream(demo.mcpUrl);
    const adminPort = await freePort();
    adminUrl = `http://127.0.0.1:${adminPort}`;
    const url = `http://${CANARY.user}:${CANARY.password}@127.0.0.1:${hop.port}/mcp?token=${CANARY.query}&region=eu`;
    gw = await startGateway(
      {
        admin: { port: adminPort },
        upstreams: [
          {
            name: "api",
            path: "/mcp",
            http: { url, headers: { "x-api-key": "${UPSTREAM_KEY}" }, requestTimeoutMs: 1_500 },
            tools: { sleep: { taskSupport: "required" } },
          },
        ],
      },
      { UPSTREAM_KEY: CANARY.header, SOME_OTHER_SECRET: CANARY.env, TASKGATE_ADMIN_TOKEN: ADMIN_TOKEN },
    );
  });
  afterAll(async () => {
    await gw?.stop();
    await hop?.close();
    await demo?.stop();
  });

  /** A plain call, a task and /readyz, each answer kept; the task's end is awaited. */
  async function drive(mode: string): Promise<void> {
    seen(`${mode} call`, (await modern(gw.mcpUrl, "tools/call", { name: "echo", arguments: { text: "hi" } })).body);
    const created = (await modern(gw.mcpUrl, "tools/call", { name: "sleep", arguments: { seconds: 0.1 } }, { capabilities: WITH_TASKS })).body;
    seen(`${mode} task`, created);
    const taskId = created.result?.taskId;
    if (typeof taskId === "string") {
      const ended = await waitFor(
        async () => {
          const task = (await getTask(gw.mcpUrl, taskId)).body.result;
          return task?.status === "working" ? undefined : task;
        },
        { timeoutMs: 20_000, what: `the ${mode} task to end` },
      );
      seen(`${mode} tasks/get`, ended);
      seen(`${mode} admin task`, (await admin(adminUrl, `/api/tasks/${taskId}`)).body);
    }
    seen(`${mode} readyz`, await (await fetch(`${gw.url}/readyz`)).text());
  }

  async function ready(): Promise<void> {
    await waitFor(async () => (await fetch(`${gw.url}/readyz`)).status === 200, { timeoutMs: 30_000, what: "the upstream back" });
  }

  it("answers every failure without the secrets, naming the upstream by its masked URL", async () => {
    await drive("pass");
    for (const mode of ["401", "redirect", "bad", "hang", "drop"] as const) {
      hop.set(mode);
      await drive(mode);
      hop.set("pass");
      await ready();
    }
    // Refused: nothing listens on the upstream's port any more.
    await hop.close();
    await waitFor(async () => (await (await fetch(`${gw.url}/readyz`)).text()).includes("ECONNREFUSED"), { timeoutMs: 30_000, what: "the upstream refusing" });
    await drive("refused");
    seen("admin list", (await admin(adminUrl, "/api/tasks")).body);
    seen("metrics", await (await fetch(`${gw.url}/metrics`)).text());

    const everything = `${answers.join("\n")}\n${gw.output()}`;
    // The URL's user and password go upstream as Basic credentials: those must not show either.
    const basic = Buffer.from(`${CANARY.user}:${CANARY.password}`).toString("base64");
    expect([...hop.authorizations]).toEqual([`Basic ${basic}`]);
    for (const [where, secret] of Object.entries({ ...CANARY, basic })) expect(everything.includes(secret), `${where} secret written`).toBe(false);
    // The paths did write about the upstream: its URL, masked, and the echoed pages, cut.
    expect(everything).toContain(`http://[redacted]@127.0.0.1:${hop.port}/mcp?token=[redacted]&region=[redacted]`);
    expect(answers.join("\n")).toMatch(/HTTP 401[^"]*Unauthorized: request \/mcp\?token=\[redacted\]/);
    expect(answers.join("\n")).toMatch(/HTTP 302/);
    expect(gw.output()).toContain("skipped an upstream message that is not JSON-RPC");
    expect(answers.some((a) => a.startsWith("refused") && a.includes("ECONNREFUSED"))).toBe(true);
  });
});
