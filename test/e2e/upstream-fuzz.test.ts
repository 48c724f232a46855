import fc from "fast-check";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { modern } from "../helpers/modern.js";
import { ROOT, runNode, startGateway, type GatewayProcess, type RunningProcess } from "../helpers/processes.js";
import { waitFor } from "../helpers/wait-for.js";

const ODD = join(ROOT, "test/fixtures/odd-server.mjs");
const LIMIT = 64 * 1024;
const SEED = Number(process.env["FUZZ_SEED"] ?? Date.now() % 2 ** 31);

type Frame = { garbage: string } | { long: number } | { deep: number } | { unknownId: number } | { badParams: unknown } | { answer: string };
type End = "answer" | "deep" | "wrong_shape" | "long" | "cut";

/** One line or SSE event with no line break in it. */
const oneLine = fc.string({ maxLength: 200 }).map((s) => s.replace(/[\r\n]/g, " "));
const noise: fc.Arbitrary<Frame> = fc.oneof(
  oneLine.map((garbage) => ({ garbage })),
  fc.constantFrom('{"jsonrpc":"2.0"', '{"jsonrpc":"2.0","id":', "[]", "null", '{"jsonrpc":"1.0","id":1,"result":{}}', "{}").map((garbage) => ({ garbage })),
  fc.integer({ min: LIMIT + 1, max: 3 * LIMIT }).map((long) => ({ long })),
  fc.integer({ min: 257, max: 6000 }).map((deep) => ({ deep })),
  fc.integer({ min: 900_000_000, max: 999_999_999 }).map((unknownId) => ({ unknownId })),
  fc.oneof(fc.string(), fc.integer(), fc.constant(null), fc.array(fc.integer()), fc.boolean()).map((badParams) => ({ badParams })),
);
const script = fc.record({
  before: fc.array(noise, { maxLength: 4 }),
  end: fc.constantFrom<End>("answer", "answer", "answer", "deep", "wrong_shape", "long", "cut"),
  after: fc.array(fc.oneof(noise, fc.constant<Frame>({ answer: "a duplicate" })), { maxLength: 3 }),
});

/** What the error of a call that ended as `end` names: the bound, the shape, or how the upstream went away. */
const EXPECTED_ERROR: Record<Exclude<End, "answer">, Record<"stdio" | "http", RegExp>> = {
  deep: { stdio: /stdio\.maxJsonDepth/, http: /http\.maxJsonDepth/ },
  wrong_shape: { stdio: /expected record, received array/, http: /expected record, received array/ },
  long: { stdio: /stdio\.maxLineBytes/, http: /http\.maxMessageBytes/ },
  cut: { stdio: /upstream process exited/, http: /response stream of tools\/call .* before the response/ },
};

/**
 * The mirror of fuzz.test.ts on the upstream side: an upstream that answers with malformed and
 * oversized lines, deep nesting, responses to ids nobody asked, duplicates, results of the wrong
 * shape, notifications with bad params, bytes after its response, and a stream cut mid-event.
 * Zero crashes; each affected call fails with an error saying what was wrong; a call running beside
 * it on the same gateway finishes untouched.
 */
describe("fuzzed upstream answers, over stdio and HTTP", () => {
  let gw: GatewayProcess;
  let oddHttp: RunningProcess;
  beforeAll(async () => {
    oddHttp = runNode([ODD, "http"]);
    const port = await waitFor(() => /listening (\d+)/.exec(oddHttp.output())?.[1], { timeoutMs: 10_000, what: "the odd fixture listening" });
    gw = await startGateway({
      log: { level: "warn" },
      upstreams: [
        // Every call on a process of its own: a process the quiet lane shares takes all its calls
        // with it when it exits (docs/operations/isolation.md), and the "cut" ending exits.
        {
          name: "odd-stdio",
          path: "/stdio",
          stdio: { command: process.execPath, args: [ODD, "stdio"], maxLineBytes: LIMIT, restartInitialDelayMs: 50 },
          shareQuietCalls: false,
        },
        { name: "odd-http", path: "/http", http: { url: `http://127.0.0.1:${port}/mcp`, maxMessageBytes: LIMIT } },
      ],
    });
  }, 30_000);
  afterAll(async () => {
    await gw?.stop();
    await oddHttp?.stop();
  });

  for (const transport of ["stdio", "http"] as const) {
    it(`fails only the call concerned, clearly, and stays up (${transport}, seed ${SEED})`, async () => {
      const url = `${gw.url}/${transport}`;
      let n = 0;
      await fc.assert(
        fc.asyncProperty(script, async ({ before, end, after }) => {
          const run = n++;
          const fuzzed = modern(url, "tools/call", { name: "scripted", arguments: { before, end, after, text: `fuzz ${run}`, bytes: 2 * LIMIT } });
          const beside = modern(url, "tools/call", { name: "echo", arguments: { text: `beside ${run}` } });
          const [answer, other] = await Promise.all([fuzzed, beside]);
          expect(other.body.result?.content?.[0]?.text, "the call beside it").toBe(`Echo: beside ${run}`);
          // Over HTTP an event past maxMessageBytes breaks the call's stream, whatever comes after it.
          const broken = transport === "http" && before.some((f) => "long" in f);
          if (end === "answer" && !broken) {
            expect(answer.body.result?.content?.[0]?.text, JSON.stringify(answer.body)).toBe(`fuzz ${run}`);
            return;
          }
          expect(answer.body.error?.code, JSON.stringify(answer.body)).toEqual(expect.any(Number));
          const expected = broken ? /http\.maxMessageBytes/ : EXPECTED_ERROR[end as Exclude<End, "answer">][transport];
          expect(answer.body.error.message).toMatch(expected);
        }),
        { numRuns: 60, seed: SEED },
      );
      expect(gw.proc.exitCode).toBeNull();
      expect((await fetch(`${gw.url}/readyz`)).status).toBe(200);
    }, 240_000);
  }
});
