import { randomUUID } from "node:crypto";
import { getRequestListener } from "@hono/node-server";
import { decodeMessage } from "../../src/jsonrpc/decode.js";
import { echoParams, legacyRequest, modernRequest } from "../lib/mcp.js";

/**
 * CPU cost of single steps on taskgate's request path, in isolation, on the messages the bench
 * sends (`node dist-bench/bench/micro/hot-path.js`, after `npm run bench` or `tsc -p bench`).
 * Each step runs in a loop and is timed by process.cpuUsage(), so a loaded machine moves the
 * figures less than wall time would; compare them with each other and with the CPU-µs per request
 * of the bench report, not across machines. Used by docs/contributing/performance.md to size candidate changes.
 */
const ROUNDS = 5;
const LOOPS = 20_000;

// @hono/node-server's lightweight Request/Response replace the globals once a listener is made,
// as in taskgate: Response.json() below is the one a route returns.
getRequestListener(() => new Response(null));

const modern = modernRequest("tools/call", "echo", echoParams, {}, "1").body;
const legacy = legacyRequest("s", "tools/call", echoParams, "1").body;
const reply = JSON.stringify({ result: { content: [{ type: "text", text: "hello from the bench" }] }, jsonrpc: "2.0", id: 4711 });
const replyObject = JSON.parse(reply) as Record<string, unknown>;

let sink: unknown;
const steps: [string, () => unknown][] = [
  ["JSON.parse, modern request", () => JSON.parse(modern)],
  ["decodeMessage (JSON.parse + zod), modern request", () => decodeMessage(modern)],
  ["JSON.parse, legacy request", () => JSON.parse(legacy)],
  ["decodeMessage (JSON.parse + zod), legacy request", () => decodeMessage(legacy)],
  ["decodeMessage with the front's depth bound (maxDepth 64), modern request", () => decodeMessage(modern, { maxDepth: 64 })],
  ["hand check of jsonrpc/id/method/params, after JSON.parse", () => handCheck(JSON.parse(modern))],
  ["JSON.parse, upstream reply line", () => JSON.parse(reply)],
  ["decodeMessage (JSON.parse + zod), upstream reply line", () => decodeMessage(reply)],
  ["re-encode a decoded reply with the caller's id: JSON.stringify({...reply, id})", () => JSON.stringify({ ...replyObject, id: "front-1" })],
  ["rewrite only the id in the reply's text", () => rewriteId(reply, 4711, '"front-1"')],
  ["Response.json(message)", () => Response.json(replyObject)],
  ["Response.json(message, { headers: {} }) (a real Headers)", () => Response.json(replyObject, { headers: {} })],
  ["Response.json(message) then .headers.set(x-request-id)", () => Response.json(replyObject).headers.set("x-request-id", "r-1")],
  ["SSE frame of one message", () => `event: message\ndata: ${JSON.stringify(replyObject)}\n\n`],
  ["randomUUID()", () => randomUUID()],
  ["three object spreads of a request", () => ({ ...{ ...{ ...replyObject, a: 1 }, b: 2 }, c: 3 })],
  [
    "a closure and a resolved promise chain of 3",
    () =>
      Promise.resolve(1)
        .then((x) => x + 1)
        .then((x) => x + 1)
        .then((x) => (sink = x)),
  ],
];

function handCheck(value: Record<string, unknown>): boolean {
  const id = value.id;
  const params = value.params;
  return (
    value.jsonrpc === "2.0" &&
    (typeof id === "string" || (typeof id === "number" && Number.isFinite(id))) &&
    typeof value.method === "string" &&
    (params === undefined || (typeof params === "object" && params !== null && !Array.isArray(params)))
  );
}

/** The bytes-through alternative: the reply's own text with only its id replaced. */
function rewriteId(text: string, upstreamId: number, frontIdJson: string): string {
  const needle = `"id":${upstreamId}`;
  const at = text.lastIndexOf(needle);
  return at < 0 ? text : `${text.slice(0, at)}"id":${frontIdJson}${text.slice(at + needle.length)}`;
}

/** CPU nanoseconds per call of `fn`: the lowest of ROUNDS rounds of LOOPS calls. */
async function cost(fn: () => unknown): Promise<number> {
  let best = Infinity;
  for (let round = 0; round < ROUNDS; round++) {
    const before = process.cpuUsage();
    for (let i = 0; i < LOOPS; i++) sink = fn();
    await new Promise((resolve) => setImmediate(resolve)); // let promise chains settle inside the round
    const used = process.cpuUsage(before);
    best = Math.min(best, ((used.user + used.system) * 1000) / LOOPS);
  }
  return best;
}

process.stdout.write("| step | CPU-ns per call |\n| --- | ---: |\n");
for (const [name, fn] of steps) process.stdout.write(`| ${name} | ${Math.round(await cost(fn))} |\n`);
void sink;
