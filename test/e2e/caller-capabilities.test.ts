import { spawn } from "node:child_process";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { textOf } from "../helpers/mcp-client.js";
import { modern } from "../helpers/modern.js";
import { ROOT, startGateway, type GatewayProcess } from "../helpers/processes.js";
import { waitFor } from "../helpers/wait-for.js";

const CAPS_SERVER = join(ROOT, "test/fixtures/caps-server.mjs");
const MCP_APPS = { "io.modelcontextprotocol/ui": { mimeTypes: ["text/html;profile=mcp-app"] } };
/** A host that renders MCP Apps and answers questions, as Claude or VS Code declare themselves. */
const APPS_HOST = { elicitation: {}, sampling: {}, roots: { listChanged: true }, extensions: MCP_APPS };

async function host(url: string, capabilities: Record<string, unknown>): Promise<Client> {
  const client = new Client({ name: "host", version: "1.0.0" }, { capabilities });
  if (capabilities.elicitation) client.setRequestHandler(ElicitRequestSchema, async () => ({ action: "accept", content: { ok: true } }));
  await client.connect(new StreamableHTTPClientTransport(new URL(url)));
  return client;
}

/** The caps fixture over Streamable HTTP, its own process. */
async function capsHttp(): Promise<{ url: string; stop(): Promise<void> }> {
  const proc = spawn(process.execPath, [CAPS_SERVER, "http"], { stdio: ["ignore", "pipe", "inherit"] });
  let out = "";
  proc.stdout.on("data", (chunk: Buffer) => (out += chunk.toString()));
  const exited = new Promise<void>((resolve) => proc.once("exit", () => resolve()));
  const port = await waitFor(() => /listening (\d+)/.exec(out)?.[1], { what: "the caps fixture listening" });
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    stop: async () => {
      if (proc.exitCode === null) proc.kill("SIGKILL");
      await exited;
    },
  };
}

/**
 * The upstream sees each caller as the caller declared itself (elicitation, sampling, roots and
 * its listChanged, extensions such as MCP Apps), for two callers side by side: a server that
 * registers its app tool only for hosts that render MCP Apps (the ext-apps example, getUiCapability)
 * and asks only clients that can answer behaves through taskgate as it does direct.
 */
describe.each(["stdio", "http"] as const)("caller capabilities reach a %s upstream", (transport) => {
  let gw: GatewayProcess;
  let upstream: { url: string; stop(): Promise<void> } | undefined;
  beforeAll(async () => {
    upstream = transport === "http" ? await capsHttp() : undefined;
    const source = upstream ? { http: { url: upstream.url } } : { stdio: { command: process.execPath, args: [CAPS_SERVER, "stdio"] } };
    gw = await startGateway({ upstreams: [{ name: "caps", path: "/mcp", ...source, poolSize: 4 }] });
  });
  afterAll(async () => {
    await gw?.stop();
    await upstream?.stop();
  });

  it("lists and runs the app tool for an MCP Apps host and the text tool for a plain client, at the same time", async () => {
    const [apps, plain] = await Promise.all([host(gw.mcpUrl, APPS_HOST), host(gw.mcpUrl, {})]);
    try {
      const [appsTools, plainTools] = await Promise.all([apps.listTools(), plain.listTools()]);
      const weather = (tools: typeof appsTools) => tools.tools.find((t) => t.name === "weather");
      expect(weather(appsTools)?._meta).toMatchObject({ ui: { resourceUri: "ui://weather/view.html" } });
      expect(weather(plainTools)).toBeDefined();
      expect(weather(plainTools)?._meta).toBeUndefined();
      const [appsCall, plainCall] = await Promise.all([apps.callTool({ name: "weather", arguments: {} }), plain.callTool({ name: "weather", arguments: {} })]);
      expect(textOf(appsCall)).toBe("weather: sunny (shown in the view)");
      expect(textOf(plainCall)).toBe("weather: sunny (text only)");
      const view = await apps.readResource({ uri: "ui://weather/view.html" });
      expect(view.contents[0]).toMatchObject({ mimeType: "text/html;profile=mcp-app" });

      // What each session was told, as the server saw it: the caller's own declaration, no more.
      const [appsDeclared, plainDeclared] = await Promise.all([
        apps.callTool({ name: "declared", arguments: {} }),
        plain.callTool({ name: "declared", arguments: {} }),
      ]);
      expect(JSON.parse(textOf(appsDeclared))).toEqual({ elicitation: { form: {} }, sampling: {}, roots: { listChanged: true }, extensions: MCP_APPS });
      expect(JSON.parse(textOf(plainDeclared))).toEqual({});
    } finally {
      await Promise.all([apps.close(), plain.close()]);
    }
  });

  it("lets a server that asks only when it may take its other path for a caller that cannot answer, and ask one that can", async () => {
    const [asking, silent] = await Promise.all([host(gw.mcpUrl, { elicitation: {} }), host(gw.mcpUrl, {})]);
    try {
      const [asked, notAsked] = await Promise.all([asking.callTool({ name: "confirm", arguments: {} }), silent.callTool({ name: "confirm", arguments: {} })]);
      expect(textOf(asked)).toBe('asked: accept {"ok":true}');
      // Direct, this server would not ask: it is told the caller cannot answer, so it does not.
      expect(textOf(notAsked)).toBe("not asked: the client cannot answer, so the default applies");
    } finally {
      await Promise.all([asking.close(), silent.close()]);
    }
  });

  it("tells a 2026-07-28 caller's capabilities to the upstream too, the tasks extension left out", async () => {
    const declared = await modern(
      gw.mcpUrl,
      "tools/call",
      { name: "declared", arguments: {} },
      {
        capabilities: { extensions: { ...MCP_APPS, "io.modelcontextprotocol/tasks": {} } },
      },
    );
    expect(JSON.parse(declared.body.result.content[0].text)).toEqual({ extensions: MCP_APPS });
  });
});
