import { describe, expect, it } from "vitest";
import { UpstreamError } from "../../src/upstream/connector.js";
import { badStatus, withoutCredentials } from "../../src/upstream/http/errors.js";
import { displayUrl, urlSecrets } from "../../src/util/redact-url.js";

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

describe("an upstream URL as taskgate writes it", () => {
  it("masks the user, the password and every query value, and keeps the path", () => {
    expect(displayUrl("https://bot:s3cr%40t@api.example:8443/v1/mcp?token=abc%2Fdef&region=eu")).toBe(
      "https://[redacted]@api.example:8443/v1/mcp?token=[redacted]&region=[redacted]",
    );
    expect(displayUrl("http://127.0.0.1:3000/mcp")).toBe("http://127.0.0.1:3000/mcp");
    expect(displayUrl("not a url ?token=x")).toBe("[redacted]");
    expect(displayUrl("http://h/mcp?s3cretKey&a=1")).toBe("http://h/mcp?[redacted]&a=[redacted]");
  });

  it("knows those parts encoded and decoded, to cut them out of texts that quote them", () => {
    const secrets = urlSecrets("https://bot:s3cr%40t@api.example/mcp?token=abc%2Fdef");
    expect(secrets).toEqual(expect.arrayContaining(["bot", "s3cr%40t", "s3cr@t", "abc%2Fdef", "abc/def"]));
    const quoted = new UpstreamError("fetch refused https://bot:s3cr%40t@api.example/mcp?token=abc%2Fdef; token abc/def", "unreachable");
    expect((withoutCredentials(quoted, secrets) as Error).message).toBe("fetch refused [redacted]; token [redacted]");
  });
});
