import { createHash, randomBytes } from "node:crypto";
import type { RunningExample } from "./sdk-examples.js";

/** Where the authorization server sends its code; nothing listens there (the redirect is read, not followed). */
const REDIRECT = "http://127.0.0.1:9/callback";

/**
 * A bearer token for an OAuth example (its in-memory server, demoInMemoryOAuthProvider.js,
 * approves at once as its demo user): dynamic registration, then the authorization-code flow
 * with PKCE for the resource the example expects (`http://localhost:PORT/mcp`). Also the demo
 * user's session cookie, which the example's own pages (a URL-mode elicitation's) ask for.
 */
export async function exampleToken(example: RunningExample): Promise<{ token: string; cookie: string }> {
  const auth = `http://127.0.0.1:${example.authPort}`;
  const registered = await json(
    fetch(`${auth}/register`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ client_name: "taskgate-test", redirect_uris: [REDIRECT], token_endpoint_auth_method: "none" }),
    }),
  );
  const verifier = randomBytes(32).toString("base64url");
  const resource = `http://localhost:${example.port}/mcp`;
  const query = new URLSearchParams({
    response_type: "code",
    client_id: registered.client_id,
    redirect_uri: REDIRECT,
    code_challenge: createHash("sha256").update(verifier).digest("base64url"),
    code_challenge_method: "S256",
    resource,
    state: "s",
  });
  const approved = await fetch(`${auth}/authorize?${query}`, { redirect: "manual" });
  const code = new URL(approved.headers.get("location") ?? REDIRECT).searchParams.get("code");
  if (!code) throw new Error(`the example's authorization server gave no code (HTTP ${approved.status})`);
  const cookie = approved.headers
    .getSetCookie()
    .map((c) => c.split(";")[0])
    .join("; ");
  const form = { grant_type: "authorization_code", code, code_verifier: verifier, client_id: registered.client_id, redirect_uri: REDIRECT, resource };
  const tokens = await json(fetch(`${auth}/token`, { method: "POST", body: new URLSearchParams(form) }));
  return { token: tokens.access_token, cookie };
}

async function json(response: Promise<Response>): Promise<any> {
  const res = await response;
  if (!res.ok) throw new Error(`${res.url}: HTTP ${res.status} ${await res.text()}`);
  return res.json();
}
