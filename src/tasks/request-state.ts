import { createHmac, timingSafeEqual } from "node:crypto";
import { z } from "zod";

/** The requests a server may answer with `input_required` (https://modelcontextprotocol.io/specification/2026-07-28/basic/patterns/mrtr, SEP-2322). */
export const MRTR_METHODS = ["tools/call", "prompts/get", "resources/read"] as const;
export type MrtrMethod = (typeof MRTR_METHODS)[number];

/** The request a round belongs to: its method and what it names (tool or prompt name, resource URI). */
export interface CallTarget {
  method: MrtrMethod;
  name: string;
}

/** What a `requestState` names: the parked call, the replica holding it, its request, when it expires. */
export interface ParkTicket {
  parkId: string;
  replicaId: string;
  target: CallTarget;
  expiresAt: number; // epoch ms
}

// `m` is left out for tools/call: a state signed before prompts and resources ran rounds reads the same.
const Payload = z.object({ p: z.string().min(1), r: z.string(), t: z.string(), m: z.enum(MRTR_METHODS).optional(), e: z.number().int() });

export type TicketCheck = { ok: true; ticket: ParkTicket } | { ok: false; reason: "forged" | "expired" };

/**
 * The `requestState` of an MRTR round (https://modelcontextprotocol.io/specification/2026-07-28/basic/patterns/mrtr, SEP-2322): opaque to the client, echoed verbatim, and
 * attacker-controlled, so it is signed with HMAC-SHA256 under a secret all replicas share.
 * Format: base64url(JSON payload) "." base64url(MAC). It is not encrypted: it names only ids.
 */
export class RequestStateCodec {
  constructor(private readonly secret: string) {}

  sign(ticket: ParkTicket): string {
    const { method, name } = ticket.target;
    const fields = { p: ticket.parkId, r: ticket.replicaId, t: name, ...(method === "tools/call" ? {} : { m: method }), e: ticket.expiresAt };
    const payload = Buffer.from(JSON.stringify(fields)).toString("base64url");
    return `${payload}.${this.mac(payload)}`;
  }

  /** Forged (bad MAC, malformed) and expired are told apart only for the error message. */
  verify(state: unknown, now: number): TicketCheck {
    if (typeof state !== "string" || state.length > 4096) return { ok: false, reason: "forged" };
    const [payload, mac, extra] = state.split(".");
    if (!payload || !mac || extra !== undefined || !this.macMatches(payload, mac)) return { ok: false, reason: "forged" };
    const parsed = Payload.safeParse(parseJson(Buffer.from(payload, "base64url").toString("utf8")));
    if (!parsed.success) return { ok: false, reason: "forged" };
    const { p, r, t, m, e } = parsed.data;
    if (e <= now) return { ok: false, reason: "expired" };
    return { ok: true, ticket: { parkId: p, replicaId: r, target: { method: m ?? "tools/call", name: t }, expiresAt: e } };
  }

  private mac(payload: string): string {
    return createHmac("sha256", this.secret).update(payload).digest("base64url");
  }

  private macMatches(payload: string, mac: string): boolean {
    const expected = Buffer.from(this.mac(payload));
    const given = Buffer.from(mac);
    return expected.length === given.length && timingSafeEqual(expected, given);
  }
}

/** Same method and same name: a state is good only for a retry of the request it came from. */
export function sameTarget(a: CallTarget, b: CallTarget): boolean {
  return a.method === b.method && a.name === b.name;
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}
