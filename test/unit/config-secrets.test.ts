import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config/load.js";

const HASH = "a".repeat(64);

function load(yaml: string, env: NodeJS.ProcessEnv, files: Record<string, string> = {}) {
  const dir = mkdtempSync(join(tmpdir(), "taskgate-secrets-"));
  writeFileSync(join(dir, "taskgate.yaml"), yaml);
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
  return loadConfig({ argv: ["--config", "taskgate.yaml"], env, cwd: dir, defaultUpstream: () => ({ stdio: { command: "node" } }) });
}

const UPSTREAM = `
upstreams:
  - name: api
    http: { url: "http://127.0.0.1:1/mcp", headers: { authorization: "Bearer \${UPSTREAM_TOKEN}", x-static: "plain" } }
`;

describe("secrets in the config", () => {
  it("fills ${NAME} in upstream headers and auth from the environment", () => {
    const result = load(`auth: { mode: bearer, bearer: { tokens: [{ sha256: "\${ALICE_HASH}", principal: alice }] } }\n${UPSTREAM}`, {
      UPSTREAM_TOKEN: "s3cret",
      ALICE_HASH: HASH,
    });
    if (!result.ok) throw new Error(result.problems.join("\n"));
    expect(result.config.upstreams[0]!.http!.headers).toEqual({ authorization: "Bearer s3cret", "x-static": "plain" });
    expect(result.config.auth.bearer.tokens[0]!.sha256).toBe(HASH);
  });

  it("names an unset variable instead of sending an empty secret", () => {
    const result = load(UPSTREAM, {});
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.problems).toContain("upstreams.0.http.headers.authorization: environment variable UPSTREAM_TOKEN is not set");
  });

  it("reads a JWKS file next to the config file, and names one that is missing", () => {
    const jwks = JSON.stringify({ keys: [{ kty: "EC", crv: "P-256", x: "x", y: "y" }] });
    const found = load(`auth: { mode: jwt, jwt: { jwksFile: keys.json, audience: taskgate } }\n${UPSTREAM}`, { UPSTREAM_TOKEN: "t" }, { "keys.json": jwks });
    if (!found.ok) throw new Error(found.problems.join("\n"));
    expect(found.config.auth.jwt.jwks).toEqual(JSON.parse(jwks));
    const missing = load(`auth: { mode: jwt, jwt: { jwksFile: nope.json, audience: taskgate } }\n${UPSTREAM}`, { UPSTREAM_TOKEN: "t" });
    expect(missing.ok).toBe(false);
    if (!missing.ok) expect(missing.problems.join("\n")).toMatch(/auth\.jwt\.jwksFile: cannot read nope\.json/);
  });
});
