import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import type { RawConfig } from "./file.js";
import type { AuthConfig } from "./security-schema.js";

const REFERENCE = /\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g;

/**
 * Secrets stay out of config files: in the active auth mode's section (`auth.bearer`, `auth.jwt`,
 * `auth.header`) and in HTTP upstream `headers`, a string may name environment variables as
 * `${NAME}`. Only those are expanded, so a `${` elsewhere (a tool argument, a path) keeps its
 * meaning and an unused mode needs no variables. An unset variable is a problem, never an empty secret.
 */
export function expandSecrets(raw: RawConfig, env: NodeJS.ProcessEnv, problems: string[]): RawConfig {
  const out: RawConfig = { ...raw };
  const auth = raw["auth"];
  if (isRecord(auth) && typeof auth["mode"] === "string" && auth[auth["mode"]] !== undefined)
    out["auth"] = { ...auth, [auth["mode"]]: expand(auth[auth["mode"]], `auth.${auth["mode"]}`, env, problems) };
  const store = raw["store"];
  if (isRecord(store) && isRecord(store["sentinel"])) out["store"] = { ...store, sentinel: expand(store["sentinel"], "store.sentinel", env, problems) };
  if (Array.isArray(raw["upstreams"]))
    out["upstreams"] = raw["upstreams"].map((u: unknown, i) => {
      if (!isRecord(u) || !isRecord(u["http"]) || u["http"]["headers"] === undefined) return u;
      const headers = expand(u["http"]["headers"], `upstreams.${i}.http.headers`, env, problems);
      return { ...u, http: { ...u["http"], headers } };
    });
  return out;
}

function expand(value: unknown, path: string, env: NodeJS.ProcessEnv, problems: string[]): unknown {
  if (typeof value === "string")
    return value.replace(REFERENCE, (_, name: string) => {
      const found = env[name];
      if (found === undefined || found === "") problems.push(`${path}: environment variable ${name} is not set`);
      return found ?? "";
    });
  if (Array.isArray(value)) return value.map((v, i) => expand(v, `${path}.${i}`, env, problems));
  if (isRecord(value)) return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, expand(v, `${path}.${k}`, env, problems)]));
  return value;
}

/** JWT key files are read once here, so the auth layer only ever sees key material. */
export function readKeyFiles(auth: AuthConfig, cwd: string, problems: string[]): AuthConfig {
  const jwt = { ...auth.jwt };
  if (jwt.publicKeyFile !== undefined) {
    const text = readText(jwt.publicKeyFile, cwd, "auth.jwt.publicKeyFile", problems);
    if (text !== undefined) jwt.publicKey = text;
  }
  if (jwt.jwksFile !== undefined) {
    const text = readText(jwt.jwksFile, cwd, "auth.jwt.jwksFile", problems);
    try {
      const parsed: unknown = text === undefined ? undefined : JSON.parse(text);
      if (parsed !== undefined) {
        if (!isRecord(parsed) || !Array.isArray(parsed["keys"])) throw new Error("no keys array");
        jwt.jwks = parsed as { keys: Record<string, unknown>[] };
      }
    } catch (err) {
      problems.push(`auth.jwt.jwksFile: not a JSON Web Key Set (${(err as Error).message})`);
    }
  }
  return { ...auth, jwt };
}

function readText(file: string, cwd: string, path: string, problems: string[]): string | undefined {
  try {
    return readFileSync(resolve(cwd, file), "utf8");
  } catch (err) {
    problems.push(`${path}: cannot read ${file} (${(err as NodeJS.ErrnoException).code ?? String(err)})`);
    return undefined;
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
