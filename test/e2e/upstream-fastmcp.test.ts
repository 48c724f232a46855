import { spawn } from "node:child_process";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connectClient, textOf } from "../helpers/mcp-client.js";
import { freePort } from "../helpers/ports.js";
import { ROOT, startGateway, type GatewayProcess } from "../helpers/processes.js";
import { waitFor } from "../helpers/wait-for.js";

const FASTMCP = join(ROOT, "test/fixtures/fastmcp-server.mjs");

/** fastmcp as the upstream, over stdio and over its httpStream transport. */
describe("a fastmcp server behind taskgate", () => {
  let gw: GatewayProcess;
  let fastHttp: ReturnType<typeof spawn> | undefined;
  let httpUrl: string;
  beforeAll(async () => {
    const port = await freePort();
    httpUrl = `http://127.0.0.1:${port}/mcp`;
    fastHttp = spawn(process.execPath, [FASTMCP, "http", String(port)], { stdio: "ignore" });
    await waitFor(
      async () =>
        await fetch(httpUrl, {
          method: "POST",
          headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
          body: "{}",
        }).then(
          () => true,
          () => undefined,
        ),
      { what: "fastmcp listening" },
    );
    gw = await startGateway({
      tasks: { detachAfterMs: 500 },
      upstreams: [
        { name: "fast-stdio", path: "/mcp", stdio: { command: process.execPath, args: [FASTMCP, "stdio"] } },
        { name: "fast-http", path: "/http", http: { url: httpUrl } },
      ],
    });
  });
  afterAll(async () => {
    await gw?.stop();
    if (fastHttp && fastHttp.exitCode === null) {
      const exited = new Promise((resolve) => fastHttp?.once("exit", resolve));
      fastHttp.kill("SIGKILL");
      await exited;
    }
  });

  it.each(["stdio", "httpStream"] as const)("lists, calls and relays progress over %s as the server does direct", async (transport) => {
    const path = transport === "stdio" ? gw.mcpUrl : `${gw.url}/http`;
    const { client } = await connectClient(path);
    // The same server asked directly, over the same transport.
    const direct = new Client({ name: "direct", version: "1.0.0" });
    if (transport === "stdio") await direct.connect(new StdioClientTransport({ command: process.execPath, args: [FASTMCP, "stdio"], stderr: "ignore" }));
    else await direct.connect(new StreamableHTTPClientTransport(new URL(httpUrl)));
    try {
      const tools = (await client.listTools()).tools;
      expect(tools.map((t) => t.name).sort()).toEqual(["add", "slow"]);
      // As the server lists them, with taskgate's own offer of tasks (execution.taskSupport) added.
      expect(tools.map(({ execution: _tasks, ...tool }) => tool)).toEqual((await direct.listTools()).tools);
      const add = { name: "add", arguments: { a: 2, b: 3 } };
      expect(await client.callTool(add)).toEqual(await direct.callTool(add));
      const progress: number[] = [];
      const slow = await client.callTool({ name: "slow", arguments: { seconds: 1 } }, undefined, { onprogress: (p) => progress.push(p.progress) });
      expect(textOf(slow)).toBe("waited 1 s");
      expect(progress.at(-1)).toBe(10);
    } finally {
      await Promise.all([client.close(), direct.close()]);
    }
  });
});
