import { isIP } from "node:net";
import { z } from "zod";
import { OAuthAuth } from "./oauth-schema.js";

/**
 * Who may call, and how much one caller may hold: the `auth` and `limits` sections of the one
 * schema (schema.ts). Secrets may be written as `${ENV_NAME}` and are filled in by config/secrets.ts.
 */

const Sha256Hex = z.string().regex(/^[0-9a-fA-F]{64}$/, "must be the SHA-256 of the token, 64 hex digits");

const BearerAuth = z
  .object({
    tokens: z
      .array(
        z
          .object({
            sha256: Sha256Hex.describe("SHA-256 (hex) of the token; the token itself is never written down."),
            principal: z.string().min(1).describe("Who the token stands for; tasks are bound to it."),
          })
          .strict(),
      )
      .default([])
      .describe("Static bearer tokens, each mapped to a principal."),
  })
  .strict()
  .prefault({});

const JwtAlgorithm = z.enum(["HS256", "RS256", "ES256"]);

const JwtAuth = z
  .object({
    secret: z.string().min(32).optional().describe("HS256 shared secret (at least 32 characters); `${ENV}` form recommended."),
    publicKey: z.string().optional().describe("RS256/ES256 public key, PEM (SPKI)."),
    publicKeyFile: z.string().optional().describe("File holding publicKey; read once at start."),
    jwks: z
      .object({ keys: z.array(z.record(z.string(), z.unknown())).describe("The set's JSON Web Keys.") })
      .optional()
      .describe("A JSON Web Key Set, inline."),
    jwksFile: z.string().optional().describe("File holding a JSON Web Key Set; read once at start."),
    algorithms: z.array(JwtAlgorithm).min(1).optional().describe("Accepted algorithms; default HS256 with a secret, else RS256 and ES256."),
    issuer: z.string().min(1).optional().describe("Required `iss`, when set."),
    audience: z
      .union([z.string().min(1), z.array(z.string().min(1)).min(1)])
      .optional()
      .describe(
        "Accepted `aud` values (one or a list; a token must name one of them). Required in jwt mode, so a token minted for another service is refused; `any` accepts every audience and is warned about at start.",
      ),
    principalClaim: z.string().min(1).default("sub").describe("The claim that names the principal."),
    clockToleranceMs: z.number().int().nonnegative().default(5_000).describe("Allowed clock skew for exp and nbf."),
  })
  .strict()
  .prefault({});

const HeaderAuth = z
  .object({
    name: z.string().min(1).default("x-forwarded-user").describe("Header a trusted proxy sets to the caller's identity."),
    trustedProxies: z
      .array(z.string().refine(isAddressOrRange, "must be an IPv4/IPv6 address or a CIDR range such as 10.0.0.0/8"))
      .default([])
      .describe("Source addresses or CIDR ranges allowed to set it."),
  })
  .strict()
  .prefault({});

export const AuthSchema = z
  .object({
    mode: z
      .enum(["none", "bearer", "jwt", "header", "oauth"])
      .default("none")
      .describe("none is for development only and is warned about at start; oauth: tokens from an identity provider, discoverable by MCP clients."),
    realm: z.string().min(1).default("taskgate").describe("The realm named in WWW-Authenticate."),
    bearer: BearerAuth,
    jwt: JwtAuth,
    header: HeaderAuth,
    oauth: OAuthAuth,
  })
  .strict()
  .prefault({})
  .superRefine((auth, ctx) => {
    if (auth.mode === "bearer" && auth.bearer.tokens.length === 0)
      ctx.addIssue({ code: "custom", path: ["bearer", "tokens"], message: "bearer mode needs at least one token" });
    if (auth.mode === "header" && auth.header.trustedProxies.length === 0)
      ctx.addIssue({ code: "custom", path: ["header", "trustedProxies"], message: "header mode needs the addresses of the trusted proxies" });
    if (auth.mode === "oauth" && auth.oauth.issuer === undefined)
      ctx.addIssue({ code: "custom", path: ["oauth", "issuer"], message: "oauth mode needs the issuer of the authorization server" });
    const { secret, publicKey, publicKeyFile, jwks, jwksFile } = auth.jwt;
    const keys = [secret, publicKey ?? publicKeyFile, jwks ?? jwksFile].filter((k) => k !== undefined);
    if (auth.mode === "jwt" && keys.length !== 1)
      ctx.addIssue({ code: "custom", path: ["jwt"], message: "jwt mode needs exactly one of secret, publicKey(File) or jwks(File)" });
    if (auth.mode === "jwt" && auth.jwt.audience === undefined)
      ctx.addIssue({
        code: "custom",
        path: ["jwt", "audience"],
        message: "jwt mode needs the audience its tokens are minted for (the `aud` they carry), or `audience: any` to accept tokens minted for any service",
      });
  });

export const LimitsSchema = z
  .object({
    maxActiveTasksPerPrincipal: z.number().int().nonnegative().default(10_000).describe("Non-terminal tasks one principal may hold; 0 = no limit."),
    maxInputResponsesBytes: z
      .number()
      .int()
      .positive()
      .default(256 * 1024)
      .describe("Largest inputResponses (JSON) one tasks/update or answer may carry."),
    maxResultBytes: z
      .number()
      .int()
      .positive()
      .default(4 * 1024 * 1024)
      .describe("Largest result (JSON) stored for a task; a larger one fails the task."),
    maxSseStreamsPerPrincipal: z.number().int().nonnegative().default(100).describe("Open SSE streams one principal may hold on one replica; 0 = no limit."),
    taskRequestsPerSecond: z
      .number()
      .nonnegative()
      .default(0)
      .describe("tasks/* requests one principal may make per second on one replica (token bucket); 0 = no limit."),
    taskRequestBurst: z.number().int().positive().default(50).describe("Bucket size for taskRequestsPerSecond."),
  })
  .strict()
  .prefault({});

/** An IPv4/IPv6 address, or a CIDR range of one. */
function isAddressOrRange(entry: string): boolean {
  const [address, prefix, extra] = entry.split("/");
  const family = isIP(address ?? "");
  if (family === 0 || extra !== undefined) return false;
  if (prefix === undefined) return true;
  const bits = Number(prefix);
  return /^\d+$/.test(prefix) && bits >= 0 && bits <= (family === 6 ? 128 : 32);
}

export type AuthConfig = z.infer<typeof AuthSchema>;
export type LimitsConfig = z.infer<typeof LimitsSchema>;
