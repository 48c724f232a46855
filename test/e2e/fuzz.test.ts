import { randomBytes } from "node:crypto";
import { ErrorCode } from "@modelcontextprotocol/sdk/types.js";
import fc from "fast-check";
import { Redis } from "ioredis";
import { request } from "node:http";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { as, bearerAuth, legacy, openSessionAs } from "../helpers/auth.js";
import { modern, WITH_TASKS } from "../helpers/modern.js";
import { demoStdio, startGateway, type GatewayProcess } from "../helpers/processes.js";
import { RPC } from "../../src/jsonrpc/codes.js";
import { ERRORS } from "../../src/wire/errors.js";
import { waitFor } from "../helpers/wait-for.js";

/** HTTP status → the JSON-RPC codes taskgate's own errors come with (the one table, shown in docs/reference/errors.md). */
const CODES_BY_STATUS = new Map<number, Set<number>>();
for (const { status, code } of Object.values(ERRORS)) CODES_BY_STATUS.set(status, (CODES_BY_STATUS.get(status) ?? new Set()).add(code));
/**
 * An error answered with 200: one of taskgate's own (the table's 200 rows, or a code of the one list
 * of codes that the task protocols answer inside a result, src/jsonrpc/codes.ts), or an upstream's,
 * relayed untouched: the demo upstream is the SDK's server, whose codes are the SDK's ErrorCode.
 */
const CODES_WITH_200 = new Set<number>([
  ...(CODES_BY_STATUS.get(200) ?? []),
  ...Object.values(RPC),
  ...Object.values(ErrorCode).filter((c): c is number => typeof c === "number"),
]);
const METHODS = [
  "initialize",
  "ping",
  "tools/list",
  "tools/call",
  "tasks/get",
  "tasks/update",
  "tasks/cancel",
  "tasks/result",
  "tasks/list",
  "server/discover",
  "subscriptions/listen",
  "resources/read",
  "prompts/get",
  "notifications/cancelled",
  "notifications/initialized",
  "logging/setLevel",
];
const VERSIONS = ["2025-11-25", "2025-06-18", "2024-11-05", "2026-07-28", "2099-01-01", ""];
const BODY_LIMIT = 64 * 1024;

describe("fuzzed bad input on both eras: well-formed errors, no 500, the process stays up, no stored task changes", () => {
  let gw: GatewayProcess;
  let redis: Redis;
  let prefix: string;
  const taskIds: string[] = [];
  let bobSession: string;
  const seen = new Set<number>();
  let errorsWith200 = 0;

  beforeAll(async () => {
    prefix = `t${randomBytes(4).toString("hex")}:`;
    redis = new Redis(inject("redisUrl"));
    gw = await startGateway({
      log: { level: "warn" },
      store: { redisUrl: inject("redisUrl"), keyPrefix: prefix },
      auth: bearerAuth("alice", "bob"),
      http: { maxBodyBytes: BODY_LIMIT },
      upstreams: [{ name: "demo", path: "/mcp", stdio: demoStdio(), tools: { hang: { taskSupport: "required" }, echo: { taskSupport: "required" } } }],
    });
    // Alice's tasks, one of each kind: the fuzz (as bob, or as nobody) must change none of them.
    const b1 = await modern(gw.mcpUrl, "tools/call", { name: "hang", arguments: {} }, { capabilities: WITH_TASKS, headers: as("alice") });
    const b2 = await modern(gw.mcpUrl, "tools/call", { name: "echo", arguments: { text: "done" } }, { capabilities: WITH_TASKS, headers: as("alice") });
    const aliceSession = await openSessionAs(gw.mcpUrl, as("alice"));
    const a1 = await legacy(
      gw.mcpUrl,
      { jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "hang", arguments: {}, task: {} } },
      { ...as("alice"), "mcp-session-id": aliceSession },
    );
    taskIds.push(b1.body.result.taskId, b2.body.result.taskId, ((await a1.json()) as any).result.task.taskId);
    await waitFor(
      async () =>
        (await modern(gw.mcpUrl, "tasks/get", { taskId: taskIds[1] }, { capabilities: WITH_TASKS, headers: as("alice") })).body.result.status === "completed",
      { what: "the echo task to complete" },
    );
    bobSession = await openSessionAs(gw.mcpUrl, as("bob"));
  });
  afterAll(async () => {
    await gw?.stop();
    await redis?.quit();
  });

  /** Every key of alice's tasks, as Redis holds them (hash fields and the outcome). */
  async function snapshot() {
    const out: Record<string, unknown> = {};
    for (const id of taskIds) out[id] = { hash: await redis.hgetall(`${prefix}{t:${id}}`), outcome: await redis.get(`${prefix}{t:${id}}:out`) };
    return out;
  }

  /** The generators; built once the tasks and bob's session exist, since they draw from them. */
  function arbitraries() {
    const text = fc.oneof(fc.string(), fc.string({ unit: "binary" }), fc.string({ unit: "grapheme", maxLength: 50 }));
    const latin1 = fc.string({
      unit: fc
        .integer({ min: 0x20, max: 0xff })
        .filter((c) => c !== 0x7f)
        .map((c) => String.fromCharCode(c)),
      maxLength: 80,
    });
    const taskId = () => fc.oneof(fc.constantFrom(...taskIds), text, fc.anything());
    const meta = fc.oneof(
      fc.constant(undefined),
      fc.anything(),
      fc.record({
        "io.modelcontextprotocol/protocolVersion": fc.oneof(fc.constantFrom(...VERSIONS), fc.anything()),
        "io.modelcontextprotocol/clientCapabilities": fc.oneof(fc.constant(WITH_TASKS), fc.constant({}), fc.anything()),
      }),
    );
    const params = fc.oneof(
      fc.anything(),
      fc.record(
        {
          taskId: taskId(),
          name: fc.oneof(text, fc.constant("echo")),
          arguments: fc.anything(),
          task: fc.anything(),
          inputResponses: fc.anything(),
          cursor: fc.anything(),
          _meta: meta,
        },
        { requiredKeys: [] },
      ),
    );
    const message = fc.record(
      {
        jsonrpc: fc.oneof(fc.constant("2.0"), fc.anything()),
        id: fc.oneof(fc.integer(), text, fc.anything()),
        method: fc.oneof(fc.constantFrom(...METHODS), text),
        params,
      },
      { requiredKeys: ["jsonrpc", "method"] },
    );
    const body = fc.oneof(
      { weight: 6, arbitrary: message.map((m) => JSON.stringify(m) ?? "null") },
      { weight: 1, arbitrary: fc.array(message, { minLength: 0, maxLength: 4 }).map((b) => JSON.stringify(b)) },
      { weight: 1, arbitrary: message.chain((m) => fc.nat().map((n) => (JSON.stringify(m) ?? "").slice(0, n % 40))) },
      { weight: 1, arbitrary: fc.integer({ min: 10, max: 60_000 }).map((depth) => "[".repeat(depth) + "]".repeat(depth)) },
      {
        weight: 1,
        arbitrary: fc
          .integer({ min: 1_000, max: 2 * BODY_LIMIT })
          .map((n) => JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "x".repeat(n) } })),
      },
      { weight: 1, arbitrary: fc.string({ unit: "binary" }) },
    );
    const header = (values: fc.Arbitrary<string>) => fc.option(fc.oneof(values, latin1), { nil: undefined });
    const headers = fc.record({
      authorization: fc.oneof(fc.constant("Bearer tok-bob"), fc.constant(undefined), latin1),
      "mcp-protocol-version": header(fc.constantFrom(...VERSIONS)),
      "mcp-method": header(fc.constantFrom(...METHODS)),
      "mcp-name": header(fc.oneof(fc.constantFrom(...taskIds), fc.constant("=?base64?ZWNobw==?="), fc.constant("=?base64?!!?="))),
      "mcp-session-id": header(fc.constant(bobSession ?? "")),
      "content-type": fc.oneof(fc.constant("application/json"), fc.constant("application/json; charset=utf-8"), latin1),
      accept: fc.oneof(fc.constant("application/json, text/event-stream"), fc.constant("text/event-stream"), fc.constant("application/json"), latin1),
    });
    // Well-formed envelopes with the right headers and fuzzed params, so the handlers behind the checks are reached too.
    const auth = fc.constantFrom("Bearer tok-bob", "Bearer tok-nobody");
    const fuzzedParams = fc.record(
      {
        taskId: taskId(),
        name: fc.oneof(text, fc.constant("echo")),
        arguments: fc.anything(),
        inputResponses: fc.anything(),
        cursor: fc.anything(),
        task: fc.anything(),
      },
      { requiredKeys: [] },
    );
    const modernCase = fc
      .tuple(fc.constantFrom(...METHODS), fuzzedParams, fc.constantFrom<Record<string, unknown>>(WITH_TASKS, {}), auth, fc.boolean())
      .map(([method, p, caps, authorization, matchName]) => {
        const meta = { "io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": caps };
        const named = method.startsWith("tasks/") ? p.taskId : p.name;
        const hs: Record<string, string | undefined> = {
          authorization,
          "content-type": "application/json",
          accept: "application/json, text/event-stream",
          "mcp-protocol-version": "2026-07-28",
          "mcp-method": method,
        };
        if (typeof named === "string") hs["mcp-name"] = matchName ? `=?base64?${Buffer.from(named).toString("base64")}?=` : "not-the-name";
        return [JSON.stringify({ jsonrpc: "2.0", id: 1, method, params: { ...p, _meta: meta } }), hs] as const;
      });
    const legacyCase = fc.tuple(fc.constantFrom(...METHODS), fuzzedParams, auth).map(([method, p, authorization]) => {
      const hs: Record<string, string | undefined> = {
        authorization,
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        "mcp-protocol-version": "2025-11-25",
        "mcp-session-id": bobSession,
      };
      // A notification carries no id (and is answered 202), a request does.
      const message = method.startsWith("notifications/") ? { jsonrpc: "2.0", method, params: p } : { jsonrpc: "2.0", id: 2, method, params: p };
      return [JSON.stringify(message), hs] as const;
    });
    const random = fc.tuple(body, headers).map(([b, h]) => [b, h as Record<string, string | undefined>] as const);
    return { pair: fc.oneof({ weight: 2, arbitrary: random }, { weight: 1, arbitrary: modernCase }, { weight: 1, arbitrary: legacyCase }) };
  }

  async function check(payload: string, hs: Record<string, string | undefined>) {
    const sent = Object.fromEntries(Object.entries(hs).filter((e): e is [string, string] => e[1] !== undefined));
    const res = await rawPost(gw.mcpUrl, sent, payload);
    seen.add(res.status);
    const type = res.type;
    const raw = res.text;
    expect(res.status, raw).not.toBe(500);
    if (res.status === 202) {
      expect(raw).toBe("");
      return;
    }
    const replies = type.includes("text/event-stream")
      ? raw
          .split("\n")
          .filter((l) => l.startsWith("data: "))
          .map((l) => JSON.parse(l.slice(6)))
      : [JSON.parse(raw)];
    // A well-formed subscriptions/listen is answered by a stream that stays open: its
    // acknowledgement is the answer (https://github.com/modelcontextprotocol/ext-tasks/blob/main/specification/draft/tasks.md, and https://modelcontextprotocol.io/specification/2026-07-28/basic/patterns/subscriptions), and the client closes the stream.
    if (replies.some((r) => r.method === ACKNOWLEDGED)) return;
    const final = replies.find((r) => "result" in r || "error" in r);
    expect(final, raw).toBeDefined();
    expect(final.jsonrpc).toBe("2.0");
    if ("error" in final) {
      expect(Number.isInteger(final.error.code) && typeof final.error.message === "string", raw).toBe(true);
      // taskgate's own refusals come with the table's status and code; an error answered with 200 is
      // one of taskgate's codes or the upstream's, relayed untouched.
      if (res.status === 200) {
        errorsWith200++;
        expect([...CODES_WITH_200], raw).toContain(final.error.code);
      } else expect([...(CODES_BY_STATUS.get(res.status) ?? [])], `${res.status} ${raw}`).toContain(final.error.code);
    } else expect(res.status).toBe(200);
  }

  it("answers thousands of generated messages well, and changes none of alice's tasks", { timeout: 120_000 }, async () => {
    const before = await snapshot();
    const { pair } = arbitraries();
    await fc.assert(
      fc.asyncProperty(pair, ([payload, hs]) => check(payload, hs)),
      { numRuns: 2500, seed: Number(process.env["FUZZ_SEED"] ?? Date.now() % 2 ** 31) },
    );
    // The generators reach every layer: auth, size, media type, decoding, sessions, the handlers.
    expect([...seen]).toEqual(expect.arrayContaining([200, 202, 400, 401, 404, 413, 415]));
    expect(errorsWith200, "errors answered with 200 were checked").toBeGreaterThan(0);
    expect(gw.proc.exitCode).toBeNull();
    expect((await fetch(`${gw.url}/livez`)).status).toBe(200);
    expect(await snapshot()).toEqual(before);
    const own = await modern(gw.mcpUrl, "tasks/get", { taskId: taskIds[0] }, { capabilities: WITH_TASKS, headers: as("alice") });
    expect(own.body.result).toMatchObject({ status: "working" });
  });

  it("refuses nesting deeper than 64 in any field of any method, on both wires, first after authentication", { timeout: 60_000 }, async () => {
    const nest = ([depth, array]: [number, boolean]) => (array ? `${"[".repeat(depth)}1${"]".repeat(depth)}` : `${'{"k":'.repeat(depth)}1${"}".repeat(depth)}`);
    const deep = fc.tuple(fc.integer({ min: 65, max: 6_000 }), fc.boolean()).map(nest);
    const wire = fc.constantFrom("modern", "legacy", "no-session");
    const deepCase = fc
      .tuple(fc.constantFrom(...METHODS), fc.constantFrom(...DEEP_FIELDS), deep, wire, fc.constantFrom("Bearer tok-bob", "Bearer tok-nobody"))
      .map(([method, field, value, era, authorization]) => {
        const caps = field === "_meta.clientCapabilities" ? value : JSON.stringify(WITH_TASKS);
        const progress = field === "_meta.progressToken" ? `,"progressToken":${value}` : "";
        const version = era === "modern" ? `"io.modelcontextprotocol/protocolVersion":"2026-07-28",` : "";
        const meta = `{${version}"io.modelcontextprotocol/clientCapabilities":${caps}${progress}}`;
        const fields = [`"name":"echo"`, `"taskId":${JSON.stringify(taskIds[0])}`, `"_meta":${meta}`];
        if (!field.startsWith("_meta.")) fields.push(`${JSON.stringify(field)}:${value}`);
        const id = method.startsWith("notifications/") ? "" : `"id":7,`;
        const hs: Record<string, string | undefined> = { authorization, "content-type": "application/json", accept: "application/json, text/event-stream" };
        if (era === "modern") Object.assign(hs, { "mcp-protocol-version": "2026-07-28", "mcp-method": method, "mcp-name": "echo" });
        if (era === "legacy") Object.assign(hs, { "mcp-protocol-version": "2025-11-25", "mcp-session-id": bobSession });
        return [`{"jsonrpc":"2.0",${id}"method":${JSON.stringify(method)},"params":{${fields.join(",")}}}`, hs] as const;
      });
    await fc.assert(
      fc.asyncProperty(deepCase, async ([payload, hs]) => {
        const sent = Object.fromEntries(Object.entries(hs).filter((e): e is [string, string] => e[1] !== undefined));
        const res = await rawPost(gw.mcpUrl, sent, payload);
        const body = JSON.parse(res.text);
        // Who is asking is settled first (an unknown caller learns nothing of how its body reads);
        // for a known caller the depth is the first thing read, whatever the wire, method or headers.
        if (hs.authorization === "Bearer tok-nobody") {
          expect(res.status, res.text).toBe(401);
          expect(body.error, res.text).toMatchObject({ code: -32600, message: expect.stringMatching(/^Unauthorized/) });
        } else {
          expect(res.status, res.text).toBe(400);
          expect(body.error, res.text).toMatchObject({ code: -32600, message: expect.stringContaining("nested deeper than 64 levels") });
        }
      }),
      { numRuns: 300, seed: Number(process.env["FUZZ_SEED"] ?? Date.now() % 2 ** 31) },
    );
    expect((await fetch(`${gw.url}/livez`)).status).toBe(200);
  });
});

/** Every field a request of any method may carry, as the deep-nesting property fills them. */
const DEEP_FIELDS = [
  "capabilities",
  "clientInfo",
  "protocolVersion",
  "arguments",
  "name",
  "taskId",
  "task",
  "inputResponses",
  "requestState",
  "cursor",
  "notifications",
  "uri",
  "level",
  "requestId",
  "reason",
  "ref",
  "argument",
  "_meta.clientCapabilities",
  "_meta.progressToken",
];

const ACKNOWLEDGED = "notifications/subscriptions/acknowledged";

/** node:http rather than fetch: it sends odd but legal header bytes (latin-1, empty values) as they are. */
function rawPost(url: string, headers: Record<string, string>, body: string): Promise<{ status: number; type: string; text: string }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: "POST", headers, timeout: 10_000 }, (res) => {
      const chunks: Buffer[] = [];
      const done = () =>
        resolve({ status: res.statusCode ?? 0, type: String(res.headers["content-type"] ?? ""), text: Buffer.concat(chunks).toString("utf8") });
      res.on("data", (c: Buffer) => {
        chunks.push(c);
        // A listen stream stays open until the client closes it: stop reading at its acknowledgement.
        const text = Buffer.concat(chunks).toString("utf8");
        const at = text.indexOf(ACKNOWLEDGED);
        if (at >= 0 && text.indexOf("\n\n", at) >= 0) {
          done();
          req.destroy();
        }
      });
      res.on("end", () =>
        resolve({ status: res.statusCode ?? 0, type: String(res.headers["content-type"] ?? ""), text: Buffer.concat(chunks).toString("utf8") }),
      );
      res.on("error", reject);
    });
    req.on("timeout", () => req.destroy(new Error("no answer within 10 s")));
    req.on("error", reject);
    req.end(body);
  });
}
