import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { parse } from "yaml";
import { loadConfig } from "../../src/config/load.js";
import { connectClient, textOf } from "../helpers/mcp-client.js";
import { getTask, modern, WITH_TASKS } from "../helpers/modern.js";
import { ROOT, startGateway, type GatewayProcess } from "../helpers/processes.js";
import { waitFor } from "../helpers/wait-for.js";

const FOLLOW = { timeoutMs: 30_000, intervalMs: 200 };

// docs/guides/retrofit-stdio.md: retrofit a legacy stdio server. Each recipe's own file is loaded (schema,
// then a real gateway from it) in front of its unmodified server, which knows nothing of tasks.
describe.each([
  { lang: "Python (standard library only)", file: "config/recipes/retrofit-python.yaml" },
  { lang: "Node (MCP TypeScript SDK 1.x)", file: "config/recipes/retrofit-node.yaml" },
])("recipe: retrofit a legacy stdio server in $lang", ({ file }) => {
  let gw: GatewayProcess;
  beforeAll(async () => {
    const loaded = loadConfig({ argv: ["--config", file], env: {}, cwd: ROOT, defaultUpstream: () => ({}) });
    expect(loaded.ok ? [] : loaded.problems).toEqual([]);
    const recipe = parse(readFileSync(join(ROOT, file), "utf8"));
    gw = await startGateway({ ...recipe, store: { redisUrl: inject("redisUrl"), keyPrefix: `t${randomBytes(4).toString("hex")}:` } });
  });
  afterAll(async () => gw?.stop());

  it("gives a tasks-extension client a task for the server's long tool", async () => {
    const created = (await modern(gw.mcpUrl, "tools/call", { name: "build_report", arguments: { seconds: 3 } }, { capabilities: WITH_TASKS })).body.result;
    expect(created.resultType).toBe("task");
    const done = await waitFor(
      async () => {
        const task = (await getTask(gw.mcpUrl, created.taskId)).body.result;
        return task.status === "working" ? undefined : task;
      },
      { ...FOLLOW, what: "the task" },
    );
    expect(done).toMatchObject({ status: "completed", result: { content: [{ type: "text", text: "Report ready after 3 s" }] } });
  });

  it("lets a task-unaware client follow the same call through the gateway tools, progress included", async () => {
    const { client } = await connectClient(gw.mcpUrl);
    try {
      expect((await client.listTools()).tools.map((t) => t.name)).toEqual(expect.arrayContaining(["build_report", "taskgate_status", "taskgate_result"]));
      const { taskId } = ((await client.callTool({ name: "build_report", arguments: { seconds: 4 } })) as any).structuredContent;
      const progress = await waitFor(
        async () => ((await client.callTool({ name: "taskgate_status", arguments: { taskId } })) as any).structuredContent.statusMessage,
        { ...FOLLOW, what: "progress" },
      );
      expect(progress).toMatch(/^Report \d+s/);
      const result = await waitFor(
        async () => {
          const r = await client.callTool({ name: "taskgate_result", arguments: { taskId } });
          return textOf(r).startsWith("Report ready") ? r : undefined;
        },
        { ...FOLLOW, what: "the result" },
      );
      expect(textOf(result)).toBe("Report ready after 4 s");
    } finally {
      await client.close();
    }
  });
});

describe("the image for a Python server", () => {
  it("extends taskgate's image with python3 and copies the files its recipe names, running as uid 1000", () => {
    const dockerfile = readFileSync(join(ROOT, "examples/python-stdio/Dockerfile"), "utf8");
    const recipe = parse(readFileSync(join(ROOT, "config/recipes/retrofit-python.yaml"), "utf8"));
    const { command, args } = recipe.upstreams[0].stdio;
    expect(dockerfile).toMatch(/^FROM taskgate:/m);
    expect(dockerfile).toMatch(new RegExp(`apt-get install[^\\n]*\\b${command}\\b`));
    expect(dockerfile).toContain(`COPY ${args.at(-1)} ./${args.at(-1)}`);
    expect(dockerfile).toContain("COPY config/recipes/retrofit-python.yaml ./config/recipes/retrofit-python.yaml");
    expect(
      dockerfile
        .trim()
        .split("\n")
        .filter((l) => l.startsWith("USER"))
        .at(-1),
    ).toBe("USER 1000:1000");
  });
});
