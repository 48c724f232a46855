import { afterAll, beforeAll, expect, it } from "vitest";
import { inProcessGateway, type InProcessGateway } from "../helpers/in-process.js";
import { messagesOf } from "../helpers/raw.js";
import { WITH_TASKS } from "../helpers/modern.js";

let gw: InProcessGateway;
beforeAll(async () => {
  gw = await inProcessGateway();
});
afterAll(async () => gw?.close());

it("works", async () => {
  const s = await gw.openSession();
  const res = await gw.post({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "echo", arguments: { text: "hi" } } }, { "mcp-session-id": s, "mcp-protocol-version": "2025-11-25" });
  console.log(await messagesOf(res));
  console.log(JSON.stringify((await gw.modern("tools/call", { name: "deploy", arguments: { service: "x" } }, { capabilities: { ...WITH_TASKS, elicitation: { form: {} } } })).body));
  console.log((await gw.request("/readyz")).status);
});
