import { ClientCredentialsProvider } from "@modelcontextprotocol/sdk/client/auth-extensions.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { admin, ADMIN_TOKEN } from "../helpers/admin.js";
import { legacy, openSessionAs } from "../helpers/auth.js";
import { connectClient, textOf } from "../helpers/mcp-client.js";
import { modern, WITH_TASKS } from "../helpers/modern.js";
import { startAuthServer, type AuthServer, type TestClient } from "../helpers/oidc.js";
import { freePort } from "../helpers/ports.js";
import { demoStdio, startGateway, type GatewayProcess } from "../helpers/processes.js";
import { messagesOf } from "../helpers/raw.js";

const agent: TestClient = { id: "agent", secret: "agent-secret-0123456789-0123456789", scope: "mcp deploy tasks.cancel" };
const WELL_KNOWN = "/.well-known/oauth-protected-resource";

describe("scopes per tool and per method in oauth mode, and a real MCP client that discovers the authorization server", () => {
  let as: AuthServer;
  let gw: GatewayProcess;
  let adminUrl: string;
  beforeAll(async () => {
    as = await startAuthServer([agent]);
    const adminPort = await freePort();
    adminUrl = `http://127.0.0.1:${adminPort}`;
    gw = await startGateway(
      {
        auth: { mode: "oauth", oauth: { issuer: as.issuer } },
        admin: { port: adminPort },
        upstreams: [
          {
            name: "demo",
            path: "/mcp",
            stdio: demoStdio(),
            scopes: { required: ["mcp"], methods: { "tasks/cancel": ["tasks.cancel"] } },
            tools: { deploy: { scopes: ["deploy"] } },
          },
        ],
      },
      { TASKGATE_ADMIN_TOKEN: ADMIN_TOKEN },
    );
  });
  afterAll(async () => Promise.all([gw?.stop(), as?.close()]));

  const bearer = async (scope: string) => ({ authorization: `Bearer ${await as.token(agent, gw.mcpUrl, scope)}` });
  const metadataUrl = () => `${gw.url}${WELL_KNOWN}/mcp`;

  function expectInsufficient(res: { status: number; headers: Headers }, body: any, scope: string) {
    expect(res.status).toBe(403);
    expect(body).toMatchObject({ jsonrpc: "2.0", error: { code: -32600, message: expect.stringContaining("insufficient scope") } });
    const challenge = res.headers.get("www-authenticate") ?? "";
    expect(challenge).toContain('error="insufficient_scope"');
    expect(challenge).toContain(`scope="${scope}"`);
    expect(challenge).toContain(`resource_metadata="${metadataUrl()}"`);
  }

  it("refuses a token without the endpoint's required scope on every request", async () => {
    const res = await modern(gw.mcpUrl, "server/discover", {}, { headers: await bearer("deploy") });
    expectInsufficient(res, res.body, "mcp");
  });

  it("refuses tools/call of a tool whose scope the token lacks, on the 2026-07-28 wire and in a 2025-11-25 session", async () => {
    const headers = await bearer("mcp");
    const call = { name: "deploy", arguments: { service: "api", seconds: 0 } };
    const modernCall = await modern(gw.mcpUrl, "tools/call", call, { headers, capabilities: WITH_TASKS });
    expectInsufficient(modernCall, modernCall.body, "mcp deploy");
    // The Mcp-Name header counts as well as the body: naming a cheaper tool in one of them does not help.
    const mismatched = await modern(gw.mcpUrl, "tools/call", { name: "echo", arguments: { text: "x" } }, { headers: { ...headers, "mcp-name": "deploy" } });
    expectInsufficient(mismatched, mismatched.body, "mcp deploy");
    const session = await openSessionAs(gw.mcpUrl, headers);
    const res = await legacy(gw.mcpUrl, { jsonrpc: "2.0", id: 5, method: "tools/call", params: call }, { ...headers, "mcp-session-id": session });
    const [reply] = await messagesOf(res.clone());
    expectInsufficient(res, reply, "mcp deploy");
    expect(reply.id).toBe(5);
    // A tool without a scope of its own needs only the endpoint's.
    const echo = await modern(gw.mcpUrl, "tools/call", { name: "echo", arguments: { text: "hi" } }, { headers });
    expect(echo.status).toBe(200);
    expect(echo.body.result.content[0].text).toBe("hi");
  });

  it("refuses tasks/cancel without its scope in both task protocols, and lets it through with the scope", async () => {
    const without = await bearer("mcp");
    const extension = await modern(gw.mcpUrl, "tasks/cancel", { taskId: "01ARZ3NDEKTSV4RRFFQ69G5FAV" }, { headers: without, capabilities: WITH_TASKS });
    expectInsufficient(extension, extension.body, "mcp tasks.cancel");
    const session = await openSessionAs(gw.mcpUrl, without, { tasks: {} });
    const res = await legacy(
      gw.mcpUrl,
      { jsonrpc: "2.0", id: 6, method: "tasks/cancel", params: { taskId: "01ARZ3NDEKTSV4RRFFQ69G5FAV" } },
      { ...without, "mcp-session-id": session },
    );
    expectInsufficient(res, (await messagesOf(res.clone()))[0], "mcp tasks.cancel");
    // With the scope the request reaches the task layer, which knows no such task.
    const allowed = await modern(
      gw.mcpUrl,
      "tasks/cancel",
      { taskId: "01ARZ3NDEKTSV4RRFFQ69G5FAV" },
      { headers: await bearer("mcp tasks.cancel"), capabilities: WITH_TASKS },
    );
    expect(allowed.status).toBe(200);
    expect(allowed.body.error.code).toBe(-32602);
  });

  it("keeps the admin listener on its own token: an OAuth token does not open it", async () => {
    const token = (await bearer("mcp deploy tasks.cancel")).authorization.slice("Bearer ".length);
    expect((await admin(adminUrl, "/api/tasks", { token })).status).toBe(401);
    expect((await admin(adminUrl, "/api/tasks")).status).toBe(200);
  });

  // The SDK's client-credentials provider (1.x) asks for its own configured scope, not the one a
  // challenge names, so it is given the scopes it needs; everything else it finds by itself.
  it("the SDK client finds the authorization server from the 401 and gets a token by client credentials", async () => {
    const authProvider = new ClientCredentialsProvider({ clientId: agent.id, clientSecret: agent.secret, expectedIssuer: as.issuer, scope: "mcp deploy" });
    // Given only the MCP URL: the resource metadata, the issuer's metadata and the token endpoint it finds itself.
    const { client } = await connectClient(gw.mcpUrl, { authProvider, elicit: () => ({ action: "accept", content: { confirm: true } }) });
    try {
      expect(authProvider.tokens()?.scope).toBe("mcp deploy");
      expect(textOf(await client.callTool({ name: "echo", arguments: { text: "through oauth" } }))).toBe("through oauth");
      expect(textOf(await client.callTool({ name: "deploy", arguments: { service: "api", seconds: 0 } }))).toBe("Deployed api");
    } finally {
      await client.close();
    }
  });

  it("the SDK client with a token lacking the tool's scope gets the 403 and never reaches the tool", async () => {
    const authProvider = new ClientCredentialsProvider({ clientId: agent.id, clientSecret: agent.secret, expectedIssuer: as.issuer, scope: "mcp" });
    const asked: string[] = [];
    const { client } = await connectClient(gw.mcpUrl, {
      authProvider,
      elicit: (message) => (asked.push(message), { action: "accept", content: { confirm: true } }),
    });
    try {
      await expect(client.callTool({ name: "deploy", arguments: { service: "api", seconds: 0 } })).rejects.toThrow(/403/);
      // deploy asks for confirmation first thing: no question means the call never reached the upstream.
      expect(asked).toEqual([]);
    } finally {
      await client.close();
    }
  });
});
