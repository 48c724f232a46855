import { CallToolResultSchema } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { textOf } from "../helpers/mcp-client.js";
import { startGateway, type GatewayProcess } from "../helpers/processes.js";
import { exampleToken } from "../helpers/example-oauth.js";
import { exampleClient, exampleStdio, startExample, type RunningExample } from "../helpers/sdk-examples.js";
import { waitFor } from "../helpers/wait-for.js";

/**
 * The example servers of `@modelcontextprotocol/sdk` 1.x (dist/esm/examples/server/), each run
 * unmodified and driven by the SDK client directly and through one taskgate (default
 * configuration) in front of them all: the result, the questions asked and the notifications seen
 * must be the same. Covered elsewhere: simpleTaskInteractive.js (sdk-examples-tasks.test.ts);
 * questions and notifications an example sends on its session's GET stream while several callers
 * share it, elicitationFormExample.js and simpleStreamableHttp.js's collect-user-info-task
 * (sdk-examples-get-stream.test.ts).
 *
 * Not run here, with the reason:
 * - simpleSseServer.js: serves only the deprecated HTTP+SSE transport (2024-11-05), which taskgate
 *   does not take as an upstream (Streamable HTTP or stdio).
 * - demoInMemoryOAuthProvider.js: the in-memory OAuth server the OAuth examples start, not an MCP server.
 * - simpleStreamableHttp.js --oauth: the server run here behind that OAuth server, as
 *   elicitationUrlExample.js is (whose token taskgate's upstream session carries in
 *   upstreams[].http.headers); not run a second time.
 *
 * elicitationUrlExample.js also asks a URL-mode question (an API key) when a session opens its GET
 * stream: a question of the session that belongs to no call, asked of a direct client, and of
 * taskgate's own upstream session, which refuses it; its payment-confirm is compared here.
 * - the examples of `@modelcontextprotocol/server` 2.x: the package ships none; the SDK
 *   repository's examples/server is a private workspace of TypeScript sources, not published to npm.
 */

const HTTP = {
  streamable: "simpleStreamableHttp.js",
  json: "jsonResponseStreamableHttp.js",
  stateless: "simpleStatelessStreamableHttp.js",
  compatible: "sseAndStreamableHttpCompatibleServer.js",
  polling: "ssePollingExample.js",
  standalone: "standaloneSseWithGetStreamableHttp.js",
  hono: "honoWebStandardStreamableHttp.js",
} as const;
const STDIO = { progress: "progressExample.js", sampling: "toolWithSampleServer.js", schema: "mcpServerOutputSchema.js" } as const;
type Name = keyof typeof HTTP | keyof typeof STDIO;

const CONTACT = { name: "Ada", email: "ada@example.com" };
const sample = (prompt: string) => `summary of ${prompt.length} characters`;
type Script = (c: Awaited<ReturnType<typeof exampleClient>>) => Promise<unknown>;

describe("the SDK 1.x example servers, directly and through taskgate", () => {
  const examples = new Map<string, RunningExample>();
  let gw: GatewayProcess;
  let oauth: { token: string; cookie: string };
  /** Where a client reaches example `name`: directly, or through the gateway. */
  const direct = (name: Name) => (name in HTTP ? examples.get(name)!.mcpUrl : exampleStdio(STDIO[name as keyof typeof STDIO]));
  const via = (name: Name) => `${gw.url}/${name}`;

  beforeAll(async () => {
    await Promise.all([
      ...Object.entries(HTTP).map(async ([name, file]) => examples.set(name, await startExample(file))),
      startExample("elicitationUrlExample.js", { withAuthServer: true }).then((e) => examples.set("url", e)),
    ]);
    // The URL example takes only requests with a token of its own OAuth server: taskgate's upstream session carries one.
    oauth = await exampleToken(examples.get("url")!);
    const http = [...examples].map(([name, example]) => {
      const headers = name === "url" ? { authorization: `Bearer ${oauth.token}` } : {};
      return { name, path: `/${name}`, http: { url: example.mcpUrl, headers } };
    });
    const stdio = Object.entries(STDIO).map(([name, file]) => ({ name, path: `/${name}`, stdio: exampleStdio(file) }));
    gw = await startGateway({ upstreams: [...http, ...stdio] });
  }, 60_000);
  afterAll(async () => {
    await gw?.stop();
    await Promise.all([...examples.values()].map((e) => e.stop()));
  });

  /**
   * One client session against `target`: `script` returns what the call gave; with what it was
   * asked and told. `listen`: wait for the GET stream first; `notifications`: how many to wait for
   * after the call (a server's last log line on the GET stream may arrive after the call's answer).
   */
  async function run(target: ReturnType<typeof direct>, script: Script, { listen = false, notifications = 0 } = {}) {
    const c = await exampleClient(target, { elicit: () => ({ action: "accept", content: CONTACT }), sample });
    try {
      if (listen) await c.untilListening();
      const result = await script(c);
      await waitFor(() => c.seen.notifications.length >= notifications, { what: `${notifications} notifications` });
      return { result, ...c.seen };
    } finally {
      await c.client.close();
    }
  }

  /** The same script directly and through taskgate, side by side: they must agree; the direct outcome. */
  async function both(name: Name, script: Script, options: Parameters<typeof run>[2] = {}) {
    const [a, b] = await Promise.all([run(direct(name), script, options), run(via(name), script, options)]);
    expect(b).toEqual(a);
    return a;
  }

  it("simpleStreamableHttp.js: tools, a prompt and a resource; multi-greet's log lines on the GET stream", async () => {
    const outcome = await both(
      "streamable",
      async ({ client, call }) => ({
        tools: (await client.listTools()).tools.map((t) => t.name).sort(),
        greet: textOf(await call("greet", { name: "Ada" })),
        multi: textOf(await call("multi-greet", { name: "Ada" })),
        prompt: (await client.getPrompt({ name: "greeting-template", arguments: { name: "Ada" } })).messages,
        resource: (await client.readResource({ uri: "https://example.com/greetings/default" })).contents,
      }),
      { listen: true, notifications: 3 },
    );
    expect(outcome.result).toMatchObject({ greet: "Hello, Ada!", multi: "Good morning, Ada!" });
    expect(outcome.notifications).toEqual([
      "notifications/message: debug Starting multi-greet for Ada",
      "notifications/message: info Sending first greeting to Ada",
      "notifications/message: info Sending second greeting to Ada",
    ]);
  });

  it("simpleStreamableHttp.js: collect-user-info asks on its call's own stream; delay runs as a task of the upstream's own", async () => {
    const outcome = await both("streamable", async ({ client, call }) => {
      const collected = textOf(await call("collect-user-info", { infoType: "contact" }));
      let delayed = "";
      for await (const message of client.experimental.tasks.callToolStream({ name: "delay", arguments: { duration: 300 } }, CallToolResultSchema, { task: {} }))
        if (message.type === "result") delayed = textOf(message.result);
      return { collected, delayed };
    });
    expect(outcome.asked).toEqual([{ method: "elicitation/create", message: "Please provide your contact information" }]);
    expect(outcome.result).toMatchObject({ collected: expect.stringContaining("Thank you! Collected contact information"), delayed: "Completed 300ms delay" });
  });

  it("simpleStreamableHttp.js: several callers at once each get their own answer", async () => {
    const names = ["Ada", "Grace", "Edsger"];
    const answers = await Promise.all(names.map((name) => run(via("streamable"), async ({ call }) => textOf(await call("greet", { name })))));
    expect(answers.map((a) => a.result)).toEqual(names.map((n) => `Hello, ${n}!`));
  });

  it("jsonResponseStreamableHttp.js: JSON responses, no GET stream", async () => {
    const outcome = await both("json", async ({ call }) => ({
      greet: textOf(await call("greet", { name: "Ada" })),
      multi: textOf(await call("multi-greet", { name: "Ada" })),
    }));
    expect(outcome.result).toEqual({ greet: "Hello, Ada!", multi: "Good morning, Ada!" });
  });

  it("simpleStatelessStreamableHttp.js: stateless, several callers at once", async () => {
    const script: Script = async ({ client, call }) => ({
      prompt: (await client.getPrompt({ name: "greeting-template", arguments: { name: "Ada" } })).messages,
      resource: (await client.readResource({ uri: "https://example.com/greetings/default" })).contents,
      stream: textOf(await call("start-notification-stream", { interval: 10, count: 3 })),
    });
    const outcome = await both("stateless", script);
    expect(outcome.result).toMatchObject({ stream: "Started sending periodic notifications every 10ms" });
    const together = await Promise.all([1, 2, 3].map(() => run(via("stateless"), script)));
    expect(together).toEqual([outcome, outcome, outcome]);
  });

  it("sseAndStreamableHttpCompatibleServer.js: its Streamable HTTP endpoint, log lines of a running call", async () => {
    const outcome = await both("compatible", async ({ call }) => textOf(await call("start-notification-stream", { interval: 10, count: 3 })), {
      listen: true,
      notifications: 3,
    });
    expect(outcome.result).toBe("Started sending periodic notifications every 10ms");
    expect(outcome.notifications).toHaveLength(3);
  });

  it("ssePollingExample.js: the server closes the call's stream mid-call; the answer and every log line still arrive", async () => {
    const outcome = await both("polling", async ({ call }) => textOf(await call("long-task", {})), { listen: true, notifications: 4 });
    expect(outcome.result).toBe("Long task completed successfully!");
    expect(outcome.notifications).toEqual([
      "notifications/message: info Progress: 25% - Starting work...",
      "notifications/message: info Progress: 50% - Halfway there...",
      "notifications/message: info Progress: 75% - Almost done (sent while client disconnected)...",
      "notifications/message: info Progress: 100% - Complete!",
    ]);
  });

  it("standaloneSseWithGetStreamableHttp.js: resources/list_changed on the GET stream reaches the caller", async () => {
    const watch = async (target: ReturnType<typeof direct>) => {
      const c = await exampleClient(target);
      try {
        await c.untilListening();
        const changes = () => c.seen.notifications.filter((n) => n === "notifications/resources/list_changed").length;
        const before = (await c.client.listResources()).resources.length;
        // A change announced after that list was read (one already seen may be in it).
        const seen = changes();
        await waitFor(() => changes() > seen, { timeoutMs: 15_000, what: "list_changed" });
        return { grew: (await c.client.listResources()).resources.length > before };
      } finally {
        await c.client.close();
      }
    };
    const [a, b] = await Promise.all([watch(direct("standalone")), watch(via("standalone"))]);
    expect(a).toEqual({ grew: true });
    expect(b).toEqual(a);
  });

  it("elicitationUrlExample.js payment-confirm: the URL-mode elicitation it requires (-32042) passed through; confirmed on its page, notifications/elicitation/complete reaches the caller", async () => {
    const example = examples.get("url")!;
    const pay = async (target: string, headers: Record<string, string>) => {
      // Declining the API-key URL elicitation the example sends when a session opens its GET stream
      // (a question of the session, no call's: taskgate's own upstream session gets it, and refuses it).
      const c = await exampleClient(target, { elicit: () => ({ action: "decline" }), urlElicitation: true, headers });
      try {
        await c.untilListening();
        const error: any = await c.call("payment-confirm", { cartId: "cart-7" }).then(
          () => undefined,
          (err: unknown) => err,
        );
        const [required] = error?.data?.elicitations ?? [];
        const page = new URL(required.url);
        const form = { session: page.searchParams.get("session") ?? "", elicitation: required.elicitationId, cartId: "cart-7", action: "confirm" };
        const confirmed = await fetch(`http://127.0.0.1:${example.port}/confirm-payment`, {
          method: "POST",
          headers: { cookie: oauth.cookie },
          body: new URLSearchParams(form),
        });
        await confirmed.body?.cancel();
        await waitFor(() => c.seen.notifications.includes("notifications/elicitation/complete"), { what: "the elicitation's completion" });
        return {
          code: error.code,
          mode: required.mode,
          message: required.message,
          page: page.pathname,
          confirmed: confirmed.status,
          notifications: c.seen.notifications,
        };
      } finally {
        await c.client.close();
      }
    };
    const [a, b] = await Promise.all([pay(example.mcpUrl, { authorization: `Bearer ${oauth.token}` }), pay(via("url" as Name), {})]);
    expect(a).toEqual({
      code: -32042,
      mode: "url",
      message: "This tool requires a payment confirmation. Open the link to confirm payment!",
      page: "/confirm-payment",
      confirmed: 200,
      notifications: ["notifications/elicitation/complete"],
    });
    expect(b).toEqual(a);
  });

  it("honoWebStandardStreamableHttp.js: the Web Standard transport", async () => {
    const outcome = await both("hono", async ({ call }) => textOf(await call("greet", { name: "Ada" })));
    expect(outcome.result).toBe("Hello, Ada! (from Hono + WebStandard transport)");
  });

  it("progressExample.js (stdio): progress notifications of the call", async () => {
    const outcome = await both("progress", async ({ call }) => textOf(await call("count", { n: 3 })));
    expect(outcome.result).toBe("Counted to 3");
    expect(outcome.notifications).toEqual([1, 2, 3].map((i) => `notifications/progress: ${i}/3 Counting: ${i}/3`));
  });

  it("toolWithSampleServer.js (stdio): sampling from a plain tool, several callers at once each asked their own", async () => {
    const texts = ["one fish", "two fish, red fish", "blue fish, old fish, new fish"];
    const script =
      (text: string): Script =>
      async (c) =>
        textOf(await c.call("summarize", { text }));
    const outcome = await both("sampling", script(texts[0]!));
    expect(outcome.asked).toEqual([{ method: "sampling/createMessage", message: `Please summarize the following text concisely:\n\n${texts[0]}` }]);
    const together = await Promise.all(texts.map((text) => run(via("sampling"), script(text))));
    expect(together.map((t) => t.asked.map((a) => a.message))).toEqual(texts.map((t) => [`Please summarize the following text concisely:\n\n${t}`]));
    expect(together.map((t) => t.result)).toEqual(together.map((t) => sample(t.asked[0]!.message!)));
  });

  it("mcpServerOutputSchema.js (stdio): the output schema listed, structured content that the client validates against it", async () => {
    const outcome = await both("schema", async ({ client, call }) => {
      const tool = (await client.listTools()).tools.find((t) => t.name === "get_weather");
      const result = (await call("get_weather", { city: "Oslo", country: "NO" })) as { structuredContent?: Record<string, unknown> };
      // The weather is random: its shape is what both runs must share.
      return { outputSchema: tool?.outputSchema, keys: Object.keys(result.structuredContent ?? {}).sort() };
    });
    expect(outcome.result).toMatchObject({ keys: ["conditions", "humidity", "temperature", "wind"] });
  });
});
