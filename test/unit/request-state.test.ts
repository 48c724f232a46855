import { describe, expect, it } from "vitest";
import { RequestStateCodec, sameTarget } from "../../src/tasks/request-state.js";

const SECRET = "a-secret-of-at-least-thirty-two-characters";
const ticket = { parkId: "0123456789abcdef", replicaId: "r1", target: { method: "tools/call" as const, name: "deploy" }, expiresAt: 2_000 };
const signer = new RequestStateCodec(SECRET) as unknown as { mac(payload: string): string };

function signedPayload(fields: Record<string, unknown>): string {
  const payload = Buffer.from(JSON.stringify(fields)).toString("base64url");
  return `${payload}.${signer.mac(payload)}`;
}

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
    expect(codec.verify(signedPayload({ p: "", e: "soon" }), 0)).toEqual({ ok: false, reason: "forged" });
    expect(codec.verify(signedPayload({ p: "x", r: "r1", t: "y", m: "tasks/get", e: 2_000 }), 0)).toEqual({ ok: false, reason: "forged" });
  });

  it("binds a state to its request: method and name", () => {
    const prompt = { ...ticket, target: { method: "prompts/get" as const, name: "deploy" } };
    const resource = { ...ticket, target: { method: "resources/read" as const, name: "demo://ask/x" } };
    for (const t of [prompt, resource]) expect(codec.verify(codec.sign(t), 0)).toEqual({ ok: true, ticket: t });
    expect(sameTarget(prompt.target, ticket.target)).toBe(false);
    expect(sameTarget(prompt.target, { method: "prompts/get", name: "other" })).toBe(false);
    expect(sameTarget(prompt.target, { method: "prompts/get", name: "deploy" })).toBe(true);
  });

  it("reads a tools/call state without a method field as before", () => {
    const state = codec.sign(ticket);
    expect(JSON.parse(Buffer.from(state.split(".")[0]!, "base64url").toString("utf8"))).not.toHaveProperty("m");
    expect(codec.verify(signedPayload({ p: ticket.parkId, r: "r1", t: "deploy", e: 2_000 }), 0)).toEqual({ ok: true, ticket });
  });
});
