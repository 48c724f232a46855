import { z } from "zod";

/**
 * `auth.oauth`: taskgate as an OAuth 2.1 resource server that MCP clients discover (MCP
 * authorization, https://modelcontextprotocol.io/specification/2025-11-25/basic/authorization).
 * Only the issuer is required; keys, introspection endpoint and metadata come from its discovery
 * document. Secrets may be written as `${ENV_NAME}` (config/secrets.ts).
 */

/** Asymmetric algorithms only: a resource server never shares a signing secret with the issuer. */
export const OAuthAlgorithm = z.enum(["RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA"]);

const HttpUrl = z.url({ protocol: /^https?$/ });

const Introspection = z
  .object({
    clientId: z.string().min(1).describe("Client id taskgate authenticates to the introspection endpoint with (client_secret_basic)."),
    clientSecret: z.string().min(1).describe("Its secret; `${ENV}` form recommended."),
    url: HttpUrl.optional().describe("Introspection endpoint (RFC 7662). Omitted: the issuer metadata's introspection_endpoint."),
    cacheMs: z
      .number()
      .int()
      .nonnegative()
      .default(60_000)
      .describe(
        "How long an introspection answer is reused (never past the token's exp). Longer: fewer calls to the issuer, but a revoked token keeps working that long. 0: ask every time.",
      ),
    maxEntries: z.number().int().positive().default(10_000).describe("Introspection answers kept at most; the oldest go first."),
  })
  .strict();

export const OAuthAuth = z
  .object({
    issuer: HttpUrl.optional().describe(
      "The authorization server's issuer identifier (exact `iss`); its metadata is read from RFC 8414 or OpenID discovery. Required in oauth mode.",
    ),
    publicUrl: HttpUrl.optional().describe(
      "Base URL clients reach taskgate at (e.g. https://mcp.example.com); each upstream's resource is this plus its path. Omitted: the main listener's own URL, right only when clients connect to it directly.",
    ),
    audience: z
      .union([
        z
          .string()
          .min(1)
          .transform((one) => [one]),
        z.array(z.string().min(1)).min(1),
      ])
      .optional()
      .describe("Accepted `aud` values (one or a list). Omitted: the endpoint's resource URL (RFC 8707), so a token issued for another resource is refused."),
    jwksUrl: HttpUrl.optional().describe("JWKS URL; omitted: the issuer metadata's jwks_uri."),
    algorithms: z
      .array(OAuthAlgorithm)
      .min(1)
      .default(["RS256", "ES256"])
      .describe("Accepted JWS algorithms (pinned; symmetric ones and `none` are never accepted)."),
    principalClaim: z.string().min(1).default("sub").describe("The claim (or introspection member) that names the principal."),
    clockToleranceMs: z.number().int().nonnegative().default(5_000).describe("Allowed clock skew for exp and nbf."),
    jwksCooldownMs: z
      .number()
      .int()
      .nonnegative()
      .default(30_000)
      .describe(
        "Least time between two JWKS fetches caused by an unknown `kid`; shorter picks up a rotated key sooner, but lets forged kids cost more fetches.",
      ),
    jwksMaxAgeMs: z.number().int().positive().default(600_000).describe("Keys older than this are fetched again on the next token."),
    fetchTimeoutMs: z.number().int().positive().default(5_000).describe("Timeout of each request to the issuer (metadata, JWKS, introspection)."),
    introspection: Introspection.optional().describe("Token introspection for opaque (non-JWT) tokens; omitted: only JWT access tokens are accepted."),
    scopesSupported: z
      .array(z.string().min(1))
      .optional()
      .describe("scopes_supported in the resource metadata. Omitted: the scopes configured for that upstream."),
  })
  .strict()
  .prefault({});

export type OAuthConfig = z.infer<typeof OAuthAuth>;

/** `upstreams[].scopes`: what a token must hold to use this upstream at all, and per JSON-RPC method. */
export const UpstreamScopes = z
  .object({
    required: z.array(z.string().min(1)).default([]).describe("Scopes every request to this upstream needs; named in the 401 challenge's `scope`."),
    methods: z
      .record(z.string(), z.array(z.string().min(1)))
      .default({})
      .describe("Extra scopes per JSON-RPC method (e.g. `tasks/cancel`, `tasks/update`, `tools/call`), the same for both task protocols."),
  })
  .strict()
  .prefault({});
