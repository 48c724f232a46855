import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { comparable, Mcpdo } from "../helpers/mcpdo.js";
import { startGateway, type GatewayProcess } from "../helpers/processes.js";
import { startExample, type RunningExample } from "../helpers/sdk-examples.js";

/**
 * The MCP Inspector v2 command line (`mcpdo`, what people try first) against the SDK 1.x
 * task-native and elicitation examples, directly and through taskgate (default configuration).
 *
 * simpleTaskInteractive.js is driven through taskgate only: mcpdo follows a task with tasks/get
 * alone, and this example delivers its questions only inside a tasks/result request, so directly
 * mcpdo waits for ever on a task in input_required. taskgate holds the upstream's tasks/result
 * itself, so through it mcpdo is asked; its outcome is checked against what the SDK client gets
 * directly (sdk-examples-tasks.test.ts): the question, and "Deleted 'x.txt'".
 * elicitationFormExample.js asks on its session's GET stream: sdk-examples-get-stream.test.ts.
 */
describe("mcpdo (MCP Inspector v2) on the SDK's task-native and elicitation examples, directly and through taskgate", () => {
  let interactive: RunningExample;
  let streamable: RunningExample;
  let gw: GatewayProcess;
  const mcpdo = new Mcpdo();
  beforeAll(async () => {
    [interactive, streamable] = await Promise.all([startExample("simpleTaskInteractive.js"), startExample("simpleStreamableHttp.js")]);
    gw = await startGateway({
      upstreams: [
        { name: "interactive", path: "/interactive", http: { url: interactive.mcpUrl } },
        { name: "streamable", path: "/streamable", http: { url: streamable.mcpUrl } },
      ],
    });
    for (const url of [streamable.mcpUrl, `${gw.url}/interactive`, `${gw.url}/streamable`]) await mcpdo.connect(url);
  }, 300_000);
  afterAll(async () => {
    await mcpdo.stop();
    await gw?.stop();
    await Promise.all([interactive?.stop(), streamable?.stop()]);
  });

  it("simpleTaskInteractive.js confirm_delete as a task through taskgate: mcpdo is asked, and its answer reaches the upstream's task", async () => {
    const url = `${gw.url}/interactive`;
    const asked = await mcpdo.call(url, "confirm_delete", { filename: "x.txt" }, { task: true });
    expect(comparable(asked)).toEqual({
      question: {
        message: "Are you sure you want to delete 'x.txt'?",
        mode: "form",
        requestedSchema: { type: "object", properties: { confirm: { type: "boolean" } }, required: ["confirm"] },
        toolName: "confirm_delete",
      },
    });
    const done = await mcpdo.respond(url, asked.elicitationPending.elicitationId, { confirm: true });
    expect(comparable(done)).toEqual({ content: [{ type: "text", text: "Deleted 'x.txt'" }] });
  });

  it("simpleStreamableHttp.js collect-user-info: the same form, the same result", async () => {
    const run = async (url: string) => {
      const asked = await mcpdo.call(url, "collect-user-info", { infoType: "contact" });
      const done = await mcpdo.respond(url, asked.elicitationPending.elicitationId, { name: "Ada", email: "ada@example.com" });
      return [comparable(asked), comparable(done)];
    };
    const [direct, via] = await Promise.all([run(streamable.mcpUrl), run(`${gw.url}/streamable`)]);
    expect(direct[0]).toMatchObject({ question: { message: "Please provide your contact information" } });
    expect(JSON.stringify(direct[1])).toContain("Thank you! Collected contact information");
    expect(via).toEqual(direct);
  });

  it("simpleStreamableHttp.js delay as a task of the upstream's own: the same result", async () => {
    const run = (url: string) => mcpdo.call(url, "delay", { duration: 200 }, { task: true }).then(comparable);
    const [direct, via] = await Promise.all([run(streamable.mcpUrl), run(`${gw.url}/streamable`)]);
    expect(direct).toEqual({ content: [{ type: "text", text: "Completed 200ms delay" }] });
    expect(via).toEqual(direct);
  });
});
