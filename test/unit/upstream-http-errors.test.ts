import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { errors as undiciErrors, request } from "undici";
import { describe, expect, it } from "vitest";
import { UpstreamError } from "../../src/upstream/connector.js";
import { badStatus, errorCode, exchangeBroken, isConnectFailure, unreachable, withoutCredentials } from "../../src/upstream/http/errors.js";
import { displayUrl, urlSecrets } from "../../src/util/redact-url.js";

/** What undici really throws for a request to `url` (never resolves to a response here). */
const thrown = (url: string, options: Parameters<typeof request>[1] = {}) =>
  request(url, options).then(
    () => undefined,
    (err: unknown) => err,
  );

async function loopbackServer(handle: (socket: import("node:net").Socket) => void): Promise<{ url: string; server: Server }> {
  const server = createServer((req) => handle(req.socket));
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`, server };
}

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

describe("which failures make an HTTP upstream unreachable", () => {
  it("a connection refused is not connected: unreachable, with the cause", async () => {
    const { url, server } = await loopbackServer(() => undefined);
    server.close();
    const err = await thrown(url);
    expect(errorCode(err)).toBe("ECONNREFUSED");
    expect(isConnectFailure(err)).toBe(true);
    // fetch wraps the same error in a TypeError("fetch failed") with it as the cause.
    const viaFetch = await fetch(url).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(isConnectFailure(viaFetch)).toBe(true);
    expect(unreachable("api", url, viaFetch, [])).toMatchObject({
      reason: "unreachable",
      message: expect.stringContaining(`is unreachable at ${url}: connect ECONNREFUSED`),
    });
  });

  it("undici's connect timeout names connectTimeoutMs", () => {
    const err = new undiciErrors.ConnectTimeoutError();
    expect(isConnectFailure(err)).toBe(true);
    expect(unreachable("api", "http://u:p@127.0.0.1:1/mcp", err, [], 250).message).toBe(
      "upstream 'api' is unreachable at http://[redacted]@127.0.0.1:1/mcp: no connection within 250 ms (upstreams[].http.connectTimeoutMs)",
    );
  });

  it("a connection closed before the answer is that call's failure, not the upstream's", async () => {
    const { url, server } = await loopbackServer((socket) => socket.destroy());
    try {
      const err = await thrown(url, { method: "POST", body: "{}" });
      expect(errorCode(err)).toBe("UND_ERR_SOCKET");
      expect(isConnectFailure(err)).toBe(false);
      const failure = exchangeBroken("api", "tools/call", err);
      expect(failure).toMatchObject({ reason: "closed" });
      expect(failure.message).toMatch(/^upstream 'api' did not answer tools\/call: the connection broke before the answer \(other side closed/);
    } finally {
      server.close();
    }
  });

  it("an HTTP client limit on one exchange is that call's timeout, not the upstream's", async () => {
    const { url, server } = await loopbackServer(() => undefined);
    try {
      const err = await thrown(url, { method: "POST", body: "{}", headersTimeout: 50 });
      expect(errorCode(err)).toBe("UND_ERR_HEADERS_TIMEOUT");
      expect(isConnectFailure(err)).toBe(false);
      expect(exchangeBroken("api", "tools/call", err)).toMatchObject({
        reason: "timeout",
        message: "upstream 'api' did not answer tools/call: the HTTP client stopped waiting (Headers Timeout Error)",
      });
    } finally {
      server.closeAllConnections();
      server.close();
    }
  });
});
