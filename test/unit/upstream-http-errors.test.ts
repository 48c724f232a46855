import { describe, expect, it } from "vitest";
import { UpstreamError } from "../../src/upstream/connector.js";
import { badStatus, withoutCredentials } from "../../src/upstream/http/errors.js";

describe("errors about an HTTP upstream's answers", () => {
  it("cut out the credentials the request carried, whole or as the bare token, when the upstream echoes them", () => {
    const echoed = badStatus("api", "tools/call", 401, "invalid token tok-alice-123 (header was: Bearer tok-alice-123); tenant acme-corp");
    const clean = withoutCredentials(echoed, ["Bearer tok-alice-123", "acme-corp"]) as UpstreamError;
    expect(clean).toBeInstanceOf(UpstreamError);
    expect(clean.reason).toBe("protocol");
    expect(clean.message).toBe("upstream 'api' answered HTTP 401 to tools/call: invalid token [redacted] (header was: [redacted]); tenant [redacted]");
  });

  it("leave other errors, and errors that hold no credential, as they are", () => {
    const plain = badStatus("api", "tools/call", 500, "boom");
    expect(withoutCredentials(plain, ["Bearer tok-alice-123"])).toBe(plain);
    const other = new Error("Bearer tok-alice-123");
    expect(withoutCredentials(other, ["Bearer tok-alice-123"])).toBe(other);
  });
});
