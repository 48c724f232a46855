import type { AuthConfig } from "../config/security-schema.js";
import { BearerAuthenticator } from "./bearer.js";
import { HeaderAuthenticator } from "./header.js";
import type { Authenticator } from "./types.js";

export type { Authenticator, AuthRequest, AuthResult } from "./types.js";

/** Mode `none`: everyone passes, nobody is named. */
const NO_AUTH: Authenticator = { mode: "none", authenticate: async () => ({ ok: true }) };

/** The authenticator for the configured mode; keys are imported once, here. */
export async function createAuthenticator(config: AuthConfig): Promise<Authenticator> {
  switch (config.mode) {
    case "none":
      return NO_AUTH;
    case "bearer":
      return new BearerAuthenticator(config.bearer);
    case "jwt": {
      // The JOSE library, loaded only in the modes that verify tokens.
      const { JwtAuthenticator } = await import("./jwt.js");
      return JwtAuthenticator.create(config.jwt);
    }
    case "header":
      return new HeaderAuthenticator(config.header);
    case "oauth": {
      // Loaded only in this mode: the OAuth client library is of no use to the others.
      const { OAuthAuthenticator } = await import("./oauth/oauth.js");
      return new OAuthAuthenticator(config.oauth);
    }
  }
}
