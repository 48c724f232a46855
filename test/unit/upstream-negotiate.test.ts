import { describe, expect, it } from "vitest";
import type { JsonRpcResponse } from "../../src/jsonrpc/message.js";
import { UpstreamError } from "../../src/upstream/connector.js";
import { negotiate, type Exchange } from "../../src/upstream/negotiate.js";

const INFO = { name: "up", version: "1" };
const modernOnly = (method: string, params: Record<string, unknown>): JsonRpcResponse => {
  if (method === "server/discover")
    return {
      jsonrpc: "2.0",
      id: 1,
      result: { supportedVersions: ["2026-07-28"], capabilities: { tools: {} }, _meta: { "io.modelcontextprotocol/serverInfo": INFO } },
    };
  return {
    jsonrpc: "2.0",
    id: 1,
    error: { code: -32022, message: "Unsupported protocol version", data: { supported: ["2026-07-28"], requested: params.protocolVersion } },
  };
};
const legacyOnly = (method: string, params: Record<string, unknown>): JsonRpcResponse => {
  if (method === "initialize") return { jsonrpc: "2.0", id: 1, result: { protocolVersion: params.protocolVersion, capabilities: {}, serverInfo: INFO } };
  return { jsonrpc: "2.0", id: 1, error: { code: -32601, message: "Method not found" } };
};

/** An upstream played by `answer`, recording what taskgate sent it. */
function upstream(answer: (method: string, params: Record<string, unknown>) => JsonRpcResponse): { exchange: Exchange; sent: string[] } {
  const sent: string[] = [];
  const exchange: Exchange = async (method, params) => {
    sent.push(method === "initialize" ? `initialize ${String(params.protocolVersion)}` : method);
    return answer(method, params);
  };
  return { exchange, sent };
}

describe("negotiating the protocol generation with an upstream (https://modelcontextprotocol.io/specification/2026-07-28/basic/versioning)", () => {
  it("keeps the legacy session with a server that accepts initialize, asking nothing else", async () => {
    const { exchange, sent } = upstream(legacyOnly);
    const negotiated = await negotiate(exchange, "auto", undefined, "up");
    expect(negotiated).toMatchObject({ generation: "legacy", result: { protocolVersion: "2025-11-25", serverInfo: INFO } });
    expect(sent).toEqual(["initialize 2025-11-25"]);
  });

  it("follows -32022 naming 2026-07-28 to server/discover, once", async () => {
    const { exchange, sent } = upstream(modernOnly);
    const negotiated = await negotiate(exchange, "auto", undefined, "up");
    expect(negotiated).toEqual({ generation: "modern", result: { protocolVersion: "2026-07-28", capabilities: { tools: {} }, serverInfo: INFO } });
    expect(sent).toEqual(["initialize 2025-11-25", "server/discover"]);
  });

  it("starts from what the upstream spoke last time, sending no initialize at all", async () => {
    const { exchange, sent } = upstream(modernOnly);
    expect((await negotiate(exchange, "auto", "modern", "up")).generation).toBe("modern");
    expect(sent).toEqual(["server/discover"]);
  });

  it("retries initialize once with an older legacy version the upstream names", async () => {
    const { exchange, sent } = upstream((method, params) =>
      params.protocolVersion === "2025-06-18"
        ? legacyOnly(method, params)
        : { jsonrpc: "2.0", id: 1, error: { code: -32022, message: "no", data: { supported: ["2025-06-18"] } } },
    );
    expect(await negotiate(exchange, "auto", undefined, "up")).toMatchObject({ generation: "legacy", result: { protocolVersion: "2025-06-18" } });
    expect(sent).toEqual(["initialize 2025-11-25", "initialize 2025-06-18"]);
  });

  it("gives up at once, naming both sides' versions, when there is no common one", async () => {
    const { exchange, sent } = upstream(() => ({ jsonrpc: "2.0", id: 1, error: { code: -32022, message: "no", data: { supported: ["2030-01-01"] } } }));
    await expect(negotiate(exchange, "auto", undefined, "up")).rejects.toThrow(/speaks 2030-01-01; taskgate speaks 2026-07-28, 2025-11-25/);
    expect(sent).toEqual(["initialize 2025-11-25"]);
  });

  it("refuses the 2026-07-28 wire when the setting says legacy, and a session when it says modern", async () => {
    const modern = upstream(modernOnly);
    await expect(negotiate(modern.exchange, "legacy", undefined, "up")).rejects.toThrow(/upstreams\[\]\.generation is legacy/);
    expect(modern.sent).toEqual(["initialize 2025-11-25"]);
    const legacy = upstream(legacyOnly);
    await expect(negotiate(legacy.exchange, "modern", undefined, "up")).rejects.toThrow(/does not speak protocol 2026-07-28/);
    expect(legacy.sent).toEqual(["server/discover"]);
  });

  it("asks server/discover when initialize is refused without naming versions", async () => {
    const { exchange, sent } = upstream((method, params) =>
      method === "initialize" ? { jsonrpc: "2.0", id: 1, error: { code: -32601, message: "Method not found" } } : modernOnly(method, params),
    );
    expect((await negotiate(exchange, "auto", undefined, "up")).generation).toBe("modern");
    expect(sent).toEqual(["initialize 2025-11-25", "server/discover"]);
  });

  it("falls back to initialize when the remembered 2026-07-28 probe meets a legacy server's HTTP 400", async () => {
    const { exchange, sent } = upstream((method, params) => {
      if (method === "server/discover") throw new UpstreamError("upstream 'up' answered HTTP 400 to server/discover", "protocol");
      return legacyOnly(method, params);
    });
    expect((await negotiate(exchange, "auto", "modern", "up")).generation).toBe("legacy");
    expect(sent).toEqual(["server/discover", "initialize 2025-11-25"]);
  });

  describe("Streamable HTTP, first contact: a 2026-07-28 request first (probeModern)", () => {
    const probing = { probeModern: true };

    it("speaks 2026-07-28 from the first request to a server that names only it", async () => {
      const { exchange, sent } = upstream(modernOnly);
      expect(await negotiate(exchange, "auto", undefined, "up", probing)).toEqual({
        generation: "modern",
        result: { protocolVersion: "2026-07-28", capabilities: { tools: {} }, serverInfo: INFO },
      });
      expect(sent).toEqual(["server/discover"]);
    });

    it("repeats the probe once after -32022 naming 2026-07-28, as a client whose version was refused retries", async () => {
      let refused = false;
      const { exchange, sent } = upstream((method, params) => {
        if (refused) return modernOnly(method, params);
        refused = true;
        return { jsonrpc: "2.0", id: 1, error: { code: -32022, message: "Unsupported protocol version", data: { supported: ["2026-07-28"] } } };
      });
      expect((await negotiate(exchange, "auto", undefined, "up", probing)).generation).toBe("modern");
      expect(sent).toEqual(["server/discover", "server/discover"]);
    });

    it("keeps the session of a dual-era server: initialize follows a discover answer naming a legacy version too", async () => {
      const { exchange, sent } = upstream((method, params) =>
        method === "server/discover"
          ? { jsonrpc: "2.0", id: 1, result: { supportedVersions: ["2026-07-28", "2025-11-25"], capabilities: {}, serverInfo: INFO } }
          : legacyOnly(method, params),
      );
      expect(await negotiate(exchange, "auto", undefined, "up", probing)).toMatchObject({ generation: "legacy", result: { protocolVersion: "2025-11-25" } });
      expect(sent).toEqual(["server/discover", "initialize 2025-11-25"]);
    });

    it("falls back to initialize on a legacy server's HTTP 400 or JSON-RPC error, and probes no more once it is known", async () => {
      const http400 = upstream((method, params) => {
        if (method === "server/discover") throw new UpstreamError("upstream 'up' answered HTTP 400 to server/discover: Server not initialized", "protocol");
        return legacyOnly(method, params);
      });
      expect((await negotiate(http400.exchange, "auto", undefined, "up", probing)).generation).toBe("legacy");
      expect(http400.sent).toEqual(["server/discover", "initialize 2025-11-25"]);
      const notFound = upstream(legacyOnly);
      expect((await negotiate(notFound.exchange, "auto", undefined, "up", probing)).generation).toBe("legacy");
      expect((await negotiate(notFound.exchange, "auto", "legacy", "up", probing)).generation).toBe("legacy");
      expect(notFound.sent).toEqual(["server/discover", "initialize 2025-11-25", "initialize 2025-11-25"]);
    });

    it("falls back to initialize when the probe is not answered in time", async () => {
      const { exchange, sent } = upstream((method, params) => {
        if (method === "server/discover") throw new UpstreamError("upstream 'up' did not answer server/discover (id 1) within 30000 ms", "timeout");
        return legacyOnly(method, params);
      });
      expect((await negotiate(exchange, "auto", undefined, "up", probing)).generation).toBe("legacy");
      expect(sent).toEqual(["server/discover", "initialize 2025-11-25"]);
    });

    it("leaves generation: legacy alone: initialize only", async () => {
      const { exchange, sent } = upstream(legacyOnly);
      expect((await negotiate(exchange, "legacy", undefined, "up", probing)).generation).toBe("legacy");
      expect(sent).toEqual(["initialize 2025-11-25"]);
    });
  });
});
