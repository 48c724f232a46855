import { BlockList, isIP } from "node:net";
import type { AuthConfig } from "../config/security-schema.js";
import { MISSING, userPrincipal, type AuthRequest, type AuthResult, type Authenticator } from "./types.js";

/** Longest identity accepted from a proxy header; anything longer is not a name. */
const MAX_NAME = 256;

/**
 * Identity from a header set by a trusted proxy in front (a sidecar behind an auth proxy). The
 * header is believed only from the configured source addresses: from anywhere else it could be
 * forged by the caller, so such requests are refused whatever they carry.
 */
export class HeaderAuthenticator implements Authenticator {
  readonly mode = "header" as const;
  private readonly trusted: BlockList;

  constructor(private readonly config: AuthConfig["header"]) {
    this.trusted = trustedList(config.trustedProxies);
  }

  async authenticate(req: AuthRequest): Promise<AuthResult> {
    const address = req.remoteAddress();
    const peer = address === undefined ? undefined : normalizeAddress(address);
    if (peer === undefined || !isTrusted(this.trusted, peer))
      return { ok: false, error: "invalid_request", description: "requests must come through the trusted proxy" };
    const name = req.header(this.config.name)?.trim();
    if (!name) return MISSING;
    // Printable ASCII only: a name with control or odd characters did not come from a proxy we trust.
    if (name.length > MAX_NAME || !/^[\x21-\x7e][\x20-\x7e]*$/.test(name))
      return { ok: false, error: "invalid_request", description: `malformed ${this.config.name} header` };
    return { ok: true, principal: userPrincipal(name) };
  }
}

/** Addresses (`10.0.0.2`, `::1`) and CIDR ranges (`10.0.0.0/8`, `fd00::/8`); the schema has checked them. */
export function trustedList(entries: readonly string[]): BlockList {
  const list = new BlockList();
  for (const entry of entries) {
    const [raw, prefix] = entry.split("/") as [string, string | undefined];
    const address = prefix === undefined ? normalizeAddress(raw) : raw;
    const family = isIP(address) === 6 ? "ipv6" : "ipv4";
    if (prefix === undefined) list.addAddress(address, family);
    else list.addSubnet(address, Number(prefix), family);
  }
  return list;
}

function isTrusted(list: BlockList, peer: string): boolean {
  const family = isIP(peer);
  return family !== 0 && list.check(peer, family === 6 ? "ipv6" : "ipv4");
}

/** `::ffff:10.0.0.1` and `10.0.0.1` are the same peer; IPv6 compared lower-case. */
export function normalizeAddress(address: string): string {
  const lower = address.trim().toLowerCase();
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(lower);
  if (mapped && isIP(mapped[1]!) === 4) return mapped[1]!;
  return lower;
}
