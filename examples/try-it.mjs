#!/usr/bin/env node
// One request to taskgate on the stateless 2026-07-28 wire, declaring the tasks extension and
// elicitation, printed as the gateway answered it:
//   node examples/try-it.mjs call TOOL '{"arg":1}'      tools/call
//   node examples/try-it.mjs get TASK_ID                 tasks/get
//   node examples/try-it.mjs answer '{"confirm":true}'   repeats the last call with that answer to its question
// TASKGATE_URL (default http://127.0.0.1:8080/mcp) says where taskgate listens.
import { readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const URL_ = process.env.TASKGATE_URL ?? "http://127.0.0.1:8080/mcp";
const LAST = join(tmpdir(), "taskgate-try-it.json");
const VERSION = "2026-07-28";

async function send(method, name, params) {
  const meta = {
    "io.modelcontextprotocol/protocolVersion": VERSION,
    "io.modelcontextprotocol/clientCapabilities": { elicitation: {}, extensions: { "io.modelcontextprotocol/tasks": {} } },
  };
  const response = await fetch(URL_, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      "mcp-protocol-version": VERSION,
      "mcp-method": method,
      "mcp-name": name,
    },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params: { ...params, _meta: meta } }),
  });
  const text = await response.text();
  process.stdout.write(`${text.trim()}\n`);
  return JSON.parse(text.startsWith("{") ? text : (text.split("\n").find((l) => l.startsWith("data: ")) ?? "data: {}").slice(6));
}

const [command, first, second] = process.argv.slice(2);
if (command === "call") {
  const params = { name: first, arguments: JSON.parse(second ?? "{}") };
  const reply = await send("tools/call", first, params);
  writeFileSync(LAST, JSON.stringify({ params, reply }));
} else if (command === "get") {
  await send("tasks/get", first, { taskId: first });
} else if (command === "answer") {
  const { params, reply } = JSON.parse(readFileSync(LAST, "utf8"));
  const keys = Object.keys(reply.result?.inputRequests ?? {});
  if (keys.length === 0) throw new Error("the last call asked nothing");
  const content = JSON.parse(first);
  const inputResponses = Object.fromEntries(keys.map((k) => [k, { action: "accept", content }]));
  const again = { ...params, inputResponses, requestState: reply.result.requestState };
  writeFileSync(LAST, JSON.stringify({ params, reply: await send("tools/call", params.name, again) }));
} else {
  process.stderr.write("usage: try-it.mjs call TOOL ARGS | get TASK_ID | answer CONTENT\n");
  process.exit(2);
}
