import { describe, expect, it } from "vitest";
import { RequestStateCodec } from "../../src/tasks/request-state.js";

const SECRET = "a-secret-of-at-least-thirty-two-characters";
const ticket = { parkId: "0123456789abcdef", replicaId: "r1", tool: "deploy", expiresAt: 2_000 };

describe("MRTR requestState", () => {
  const codec = new RequestStateCodec(SECRET);

  it("reads back what it signed until it expires", () => {
    const state = codec.sign(ticket);
    expect(codec.verify(state, 1_999)).toEqual({ ok: true, ticket });
    expect(codec.verify(state, 2_000)).toEqual({ ok: false, reason: "expired" });
  });

  it("refuses a state signed with another key, altered, malformed or not a string", () => {
    const state = codec.sign(ticket);
    const [payload, mac] = state.split(".") as [string, string];
    const altered = Buffer.from(JSON.stringify({ p: "other", r: "r1", t: "deploy", e: 2_000 })).toString("base64url");
    for (const bad of [new RequestStateCodec(`${SECRET}!`).sign(ticket), `${altered}.${mac}`, payload, `${state}.x`, "", 42, null, "x".repeat(5000)])
      expect(codec.verify(bad, 0)).toEqual({ ok: false, reason: "forged" });
  });

  it("refuses a well-signed payload of the wrong shape", () => {
    const signer = new RequestStateCodec(SECRET) as unknown as { mac(payload: string): string };
    const payload = Buffer.from(JSON.stringify({ p: "", e: "soon" })).toString("base64url");
    expect(codec.verify(`${payload}.${signer.mac(payload)}`, 0)).toEqual({ ok: false, reason: "forged" });
  });
});
