import { describe, expect, it } from "vitest";
import { ConfigSchema } from "../../src/config/schema.js";
import { gatewayToolKind, gatewayTools } from "../../src/dialects/unaware/gateway-tools.js";
import { withGatewayToolScopes } from "../../src/dialects/unaware/scopes.js";
import { scopesFor } from "../../src/http/scope-guard.js";
import { handlesUnaware, toolPolicy } from "../../src/tasks/policy.js";

const parse = (input: Record<string, unknown>) => ConfigSchema.safeParse({ upstreams: [{ http: { url: "http://up.example/mcp" } }], ...input });

describe("tasks.unawareClients and the gateway tools' names", () => {
  it("is block by default, with the default tool names and keep-alives every 15 s", () => {
    const config = ConfigSchema.parse({ upstreams: [{ http: { url: "http://up.example/mcp" } }] });
    expect(config.tasks.unawareClients).toBe("block");
    expect(config.tasks.gatewayTools).toEqual({ status: "taskgate_status", result: "taskgate_result", cancel: "taskgate_cancel", answer: "taskgate_answer" });
    expect(config.http.sseKeepAliveMs).toBe(15_000);
    expect(handlesUnaware(config.tasks, config.upstreams[0]!)).toBe(false);
  });

  it("takes the tool's setting over the upstream's over the default", () => {
    const config = ConfigSchema.parse({
      tasks: { unawareClients: "block" },
      upstreams: [{ http: { url: "http://up.example/mcp" }, unawareClients: "handle", tools: { quick: { unawareClients: "block" } } }],
    });
    const [upstream] = config.upstreams;
    expect(toolPolicy(config.tasks, upstream!, "slow").unawareClients).toBe("handle");
    expect(toolPolicy(config.tasks, upstream!, "quick").unawareClients).toBe("block");
    expect(handlesUnaware(config.tasks, upstream!)).toBe(true);
    const oneTool = ConfigSchema.parse({ upstreams: [{ http: { url: "http://up.example/mcp" }, tools: { slow: { unawareClients: "handle" } } }] });
    expect(handlesUnaware(oneTool.tasks, oneTool.upstreams[0]!)).toBe(true);
  });

  it("refuses tool names that collide or are not tool names, and accepts keep-alives off", () => {
    expect(parse({ tasks: { gatewayTools: { status: "same", result: "same" } } }).success).toBe(false);
    expect(parse({ tasks: { gatewayTools: { status: "has space" } } }).success).toBe(false);
    expect(parse({ tasks: { unawareClients: "sometimes" } }).success).toBe(false);
    expect(parse({ http: { sseKeepAliveMs: 0 } }).success).toBe(true);
  });

  it("lists renamed tools under their new names, each with an input schema that requires taskId", () => {
    const names = { status: "job_status", result: "job_result", cancel: "job_cancel", answer: "job_answer" };
    const tools = gatewayTools(names);
    expect(tools.map((t) => t.name)).toEqual(Object.values(names));
    for (const tool of tools) expect((tool.inputSchema as { required: string[] }).required).toContain("taskId");
    expect(gatewayToolKind(names, "job_answer")).toBe("answer");
    expect(gatewayToolKind(names, "taskgate_status")).toBeUndefined();
  });

  it("makes each gateway tool need the scopes of the task method it stands for", () => {
    const names = { status: "taskgate_status", result: "taskgate_result", cancel: "taskgate_cancel", answer: "taskgate_answer" };
    const policy = withGatewayToolScopes(
      { required: ["mcp"], methods: { "tasks/cancel": ["tasks:cancel"], "tasks/update": ["tasks:answer"] }, tools: { taskgate_cancel: ["extra"] } },
      names,
    );
    const scopes = (tool: string) => scopesFor(policy, { jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: tool } }, tool).sort();
    expect(scopes("taskgate_cancel")).toEqual(["extra", "mcp", "tasks:cancel"]);
    expect(scopes("taskgate_answer")).toEqual(["mcp", "tasks:answer"]);
    expect(scopes("taskgate_status")).toEqual(["mcp"]);
  });
});
