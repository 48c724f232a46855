import { createHmac, timingSafeEqual } from "node:crypto";
import { z } from "zod";

/** What a `requestState` names: the parked call, the replica holding it, the tool, when it expires. */
export interface ParkTicket {
  parkId: string;
  replicaId: string;
  tool: string;
  expiresAt: number; // epoch ms
}

const Payload = z.object({ p: z.string().min(1), r: z.string(), t: z.string(), e: z.number().int() });

export type TicketCheck = { ok: true; ticket: ParkTicket } | { ok: false; reason: "forged" | "expired" };

/**
 * The `requestState` of an MRTR round (digest §3.14): opaque to the client, echoed verbatim, and
 * attacker-controlled, so it is signed with HMAC-SHA256 under a secret all replicas share.
 * Format: base64url(JSON payload) "." base64url(MAC). It is not encrypted: it names only ids.
 */
export class RequestStateCodec {
  constructor(private readonly secret: string) {}

  sign(ticket: ParkTicket): string {
    const payload = Buffer.from(JSON.stringify({ p: ticket.parkId, r: ticket.replicaId, t: ticket.tool, e: ticket.expiresAt })).toString("base64url");
    return `${payload}.${this.mac(payload)}`;
  }

  /** Forged (bad MAC, malformed) and expired are told apart only for the error message. */
  verify(state: unknown, now: number): TicketCheck {
    if (typeof state !== "string" || state.length > 4096) return { ok: false, reason: "forged" };
    const [payload, mac, extra] = state.split(".");
    if (!payload || !mac || extra !== undefined || !this.macMatches(payload, mac)) return { ok: false, reason: "forged" };
    const parsed = Payload.safeParse(parseJson(Buffer.from(payload, "base64url").toString("utf8")));
    if (!parsed.success) return { ok: false, reason: "forged" };
    const { p, r, t, e } = parsed.data;
    if (e <= now) return { ok: false, reason: "expired" };
    return { ok: true, ticket: { parkId: p, replicaId: r, tool: t, expiresAt: e } };
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

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}
