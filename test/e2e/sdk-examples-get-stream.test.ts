import { CallToolResultSchema } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { textOf } from "../helpers/mcp-client.js";
import { comparable, Mcpdo } from "../helpers/mcpdo.js";
import { startGateway, type GatewayProcess } from "../helpers/processes.js";
import { waitFor } from "../helpers/wait-for.js";
import { exampleClient, startExample, type RunningExample } from "../helpers/sdk-examples.js";

/**
 * SDK 1.x examples that ask or tell outside any request: `server.elicitInput(...)` and
 * `sendLoggingMessage(..., sessionId)` from a tool handler travel on the session's standalone GET
 * stream, not on the call's own stream. Through taskgate each must still reach the caller whose
 * call asked, and only that caller, as directly: a call runs alone on an upstream session (README,
 * "Questions on an HTTP upstream's GET stream").
 */

/** What a caller types into each form, by the form's message; anything else is declined. */
const FORMS: Record<string, Record<string, unknown>> = {
  "Please provide your registration information:": { username: "ada", email: "ada@example.com", password: "correct-horse" },
  "Step 1: Enter basic event information": { title: "Launch" },
  "Step 2: Enter date and time": { date: "2026-12-05", startTime: "10:00", duration: 60 },
  "Please provide your contact information": { name: "Ada", email: "ada@example.com" },
};

const fill = (message: string) =>
  FORMS[message] ? { action: "accept" as const, content: FORMS[message] as Record<string, string> } : { action: "decline" as const };

describe("SDK 1.x examples that ask on the GET stream, directly and through taskgate", () => {
  let form: RunningExample;
  let streamable: RunningExample;
  let gw: GatewayProcess;
  const mcpdo = new Mcpdo();
  beforeAll(async () => {
    [form, streamable] = await Promise.all([startExample("elicitationFormExample.js"), startExample("simpleStreamableHttp.js")]);
    gw = await startGateway({
      upstreams: [
        { name: "form", path: "/form", http: { url: form.mcpUrl } },
        { name: "streamable", path: "/streamable", http: { url: streamable.mcpUrl } },
      ],
    });
  });
  afterAll(async () => {
    await mcpdo.stop();
    await gw?.stop();
    await Promise.all([form?.stop(), streamable?.stop()]);
  });

  /** `notifications`: how many to wait for after the call (the last log line on the GET stream may come after the answer). */
  async function run(url: string, tool: string, args: Record<string, unknown> = {}, elicit = fill, notifications = 0) {
    const c = await exampleClient(url, { elicit });
    try {
      await c.untilListening();
      const result = textOf(await c.call(tool, args));
      await waitFor(() => c.seen.notifications.length >= notifications, { what: `${notifications} notifications` });
      return { result, ...c.seen };
    } finally {
      await c.client.close();
    }
  }

  it.each([
    ["register_user", "Registration successful!\n\nUsername: ada\nEmail: ada@example.com\nNewsletter: No", 1],
    ["create_event", "Event created successfully!", 2],
    ["update_shipping_address", "Address update cancelled by user.", 1],
  ])("elicitationFormExample.js %s: the same forms asked, the same result", async (tool, text, forms) => {
    const [direct, via] = await Promise.all([run(form.mcpUrl, tool), run(`${gw.url}/form`, tool)]);
    expect(direct.result).toContain(text);
    expect(direct.asked).toHaveLength(forms);
    expect(via).toEqual(direct);
  });

  it("elicitationFormExample.js register_user with mcpdo (MCP Inspector v2): the same form, the same result", async () => {
    const run = async (url: string) => {
      await mcpdo.connect(url);
      const asked = await mcpdo.call(url, "register_user", {});
      if (!asked.elicitationPending) return [comparable(asked)];
      const done = await mcpdo.respond(url, asked.elicitationPending.elicitationId, FORMS["Please provide your registration information:"]!);
      return [comparable(asked), comparable(done)];
    };
    const [direct, via] = await Promise.all([run(form.mcpUrl), run(`${gw.url}/form`)]);
    expect(JSON.stringify(direct[1])).toContain("Registration successful!");
    expect(via).toEqual(direct);
  }, 300_000);

  it("elicitationFormExample.js register_user: several callers at once, each asked its own form and registered under its own answer", async () => {
    const names = ["ada", "grace", "edsger"];
    const answer = (username: string) => (message: string) => ({
      action: "accept" as const,
      content: { ...FORMS[message], username } as Record<string, string>,
    });
    const outcomes = await Promise.all(names.map((n) => run(`${gw.url}/form`, "register_user", {}, answer(n))));
    expect(outcomes.map((o) => o.asked.length)).toEqual([1, 1, 1]);
    expect(outcomes.map((o) => o.result.split("\n")[2])).toEqual(names.map((n) => `Username: ${n}`));
  });

  // The example asks from its task with `elicitInputStream` and no related-task `_meta`, which the
  // 2025-11-25 tasks utility requires of every request associated with a task
  // (https://modelcontextprotocol.io/specification/2025-11-25/basic/utilities/tasks, Related Task
  // Metadata). On the session's GET stream nothing else ties the question to a caller, so taskgate
  // refuses it (never guessed onto a call) and says so in its log; the client directly answers it.
  it("simpleStreamableHttp.js collect-user-info-task: a task's form on the GET stream without related-task _meta is refused, never guessed", async () => {
    const asTask = async (url: string) => {
      const c = await exampleClient(url, { elicit: fill });
      try {
        await c.untilListening();
        let result = "";
        const stream = c.client.experimental.tasks.callToolStream(
          { name: "collect-user-info-task", arguments: { infoType: "contact" } },
          CallToolResultSchema,
          {
            task: {},
          },
        );
        for await (const message of stream) {
          if (message.type === "result") result = textOf(message.result);
          if (message.type === "error") result = `error: ${message.error.message}`;
        }
        return { result, ...c.seen };
      } finally {
        await c.client.close();
      }
    };
    const [direct, via] = await Promise.all([asTask(streamable.mcpUrl), asTask(`${gw.url}/streamable`)]);
    expect(direct.result).toContain("Collected contact info");
    expect(direct.asked).toEqual([{ method: "elicitation/create", message: "Please provide your contact information" }]);
    expect(via.asked).toEqual([]);
    expect(via.result).toMatch(/^error: .*failed/);
    expect(gw.output()).toContain("refused a request from the upstream that belongs to no client call");
  });

  it("simpleStreamableHttp.js multi-greet: two callers at once each see their own call's log lines only", async () => {
    const url = `${gw.url}/streamable`;
    const [ada, grace] = await Promise.all([run(url, "multi-greet", { name: "Ada" }, fill, 3), run(url, "multi-greet", { name: "Grace" }, fill, 3)]);
    for (const [outcome, name] of [
      [ada, "Ada"],
      [grace, "Grace"],
    ] as const) {
      expect(outcome.result).toBe(`Good morning, ${name}!`);
      expect(outcome.notifications).toEqual([
        `notifications/message: debug Starting multi-greet for ${name}`,
        `notifications/message: info Sending first greeting to ${name}`,
        `notifications/message: info Sending second greeting to ${name}`,
      ]);
    }
  });
});
