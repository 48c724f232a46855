import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { loadConfig, type LoadConfigResult } from "../../src/config/load.js";
import { ProtectedResources } from "../../src/http/resource-metadata.js";
import { insufficientScope, scopesFor } from "../../src/http/scope-guard.js";

function load(yaml: string, env: NodeJS.ProcessEnv = {}): LoadConfigResult {
  const dir = mkdtempSync(join(tmpdir(), "taskgate-oauth-"));
  writeFileSync(join(dir, "taskgate.yaml"), yaml);
  return loadConfig({ argv: ["--config", "taskgate.yaml"], env, cwd: dir, defaultUpstream: () => ({ stdio: { command: "node" } }) });
}

const problemsOf = (r: LoadConfigResult) => (r.ok ? [] : r.problems);
const UP = "upstreams:\n  - { http: { url: http://up.example/mcp } }\n";

describe("oauth mode configuration", () => {
  it("needs the issuer, and expands ${ENV} in its section", () => {
    expect(problemsOf(load(`auth: { mode: oauth }\n${UP}`))).toEqual(["auth.oauth.issuer: oauth mode needs the issuer of the authorization server"]);
    const loaded = load(`auth: { mode: oauth, oauth: { issuer: https://id.example, introspection: { clientId: tg, clientSecret: "\${SECRET}" } } }\n${UP}`, {
      SECRET: "s3cret",
    });
    if (!loaded.ok) throw new Error(loaded.problems.join("\n"));
    expect(loaded.config.auth.oauth).toMatchObject({
      algorithms: ["RS256", "ES256"],
      principalClaim: "sub",
      jwksCooldownMs: 30_000,
      introspection: { clientSecret: "s3cret", cacheMs: 60_000 },
    });
  });

  it("refuses scopes in modes whose credentials carry none", () => {
    const yaml = "auth: { mode: none }\nupstreams:\n  - { http: { url: http://up.example/mcp }, tools: { deploy: { scopes: [deploy] } } }\n";
    expect(problemsOf(load(yaml))).toEqual(["upstreams.0.scopes: scopes need auth.mode oauth or jwt (only tokens carry scopes)"]);
  });

  it("refuses forwarding a token issued for taskgate to an upstream that is not the same resource (token passthrough)", () => {
    const forward = "upstreams:\n  - { http: { url: http://up.example/mcp, forwardAuthorization: true } }\n";
    expect(problemsOf(load(`auth: { mode: oauth, oauth: { issuer: https://id.example } }\n${forward}`))[0]).toMatch(
      /^upstreams\.0\.http\.forwardAuthorization: would hand tokens issued for taskgate to another resource/,
    );
    expect(problemsOf(load(`auth: { mode: oauth, oauth: { issuer: https://id.example, audience: [http://up.example/mcp] } }\n${forward}`))).toEqual([]);
    expect(problemsOf(load(`auth: { mode: oauth, oauth: { issuer: https://id.example, audience: http://up.example/mcp } }\n${forward}`))).toEqual([]);
  });

  it("takes one audience or a list", () => {
    const one = load(`auth: { mode: oauth, oauth: { issuer: https://id.example, audience: taskgate } }\n${UP}`);
    const list = load(`auth: { mode: oauth, oauth: { issuer: https://id.example, audience: [taskgate, other] } }\n${UP}`);
    expect([one, list].map((r) => (r.ok ? r.config.auth.oauth.audience : r.problems))).toEqual([["taskgate"], ["taskgate", "other"]]);
  });
});

describe("protected resource metadata and scope challenges", () => {
  const resources = new ProtectedResources({
    publicUrl: () => "https://mcp.example.com/gw/",
    authorizationServers: ["https://id.example"],
    scopesSupported: () => [],
  });

  it("names each endpoint's resource under the public URL and its metadata by RFC 9728's path insertion", () => {
    expect(resources.resource("/mcp")).toBe("https://mcp.example.com/gw/mcp");
    expect(resources.metadataUrl("/mcp")).toBe("https://mcp.example.com/.well-known/oauth-protected-resource/gw/mcp");
    expect(resources.metadata("/mcp")).toEqual({
      resource: "https://mcp.example.com/gw/mcp",
      authorization_servers: ["https://id.example"],
      bearer_methods_supported: ["header"],
    });
  });

  it("asks for the union of required, method and tool scopes, by body name and Mcp-Name header", () => {
    const policy = { required: ["mcp"], methods: { "tools/call": ["call"], "tasks/cancel": ["cancel"] }, tools: { deploy: ["deploy"], toString: ["x"] } };
    const call = (name: string) => ({ jsonrpc: "2.0" as const, id: 1, method: "tools/call", params: { name } });
    expect(scopesFor(policy, call("echo"), undefined)).toEqual(["mcp", "call"]);
    expect(scopesFor(policy, call("echo"), "deploy")).toEqual(["mcp", "call", "deploy"]);
    expect(scopesFor(policy, { jsonrpc: "2.0", id: 2, method: "tasks/cancel", params: { taskId: "t" } }, undefined)).toEqual(["mcp", "cancel"]);
    expect(scopesFor(policy, { jsonrpc: "2.0", id: 3, result: {} }, undefined)).toEqual(["mcp"]);
    // Names are looked up as own keys only: a tool called "constructor" needs nothing extra.
    expect(scopesFor(policy, call("constructor"), undefined)).toEqual(["mcp", "call"]);
  });

  it("answers a missing scope with 403 insufficient_scope naming every scope the operation needs", async () => {
    expect(insufficientScope(["mcp"], new Set(["mcp"]), "tg", undefined)).toBeUndefined();
    const refused = insufficientScope(["mcp", "deploy"], new Set(["mcp"]), "tg", resources.challengeFor("/mcp"))!.toResponse(4);
    expect(refused.status).toBe(403);
    expect(refused.headers.get("www-authenticate")).toBe(
      'Bearer realm="tg", error="insufficient_scope", error_description="the token lacks the scope deploy", scope="mcp deploy", resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource/gw/mcp"',
    );
    expect(await refused.json()).toEqual({ jsonrpc: "2.0", id: 4, error: { code: -32600, message: "Forbidden: insufficient scope: needs deploy" } });
    // Credentials that carry no scopes grant none.
    expect(insufficientScope(["mcp"], undefined, "tg", undefined)?.status).toBe(403);
  });
});
