import { createConnection } from "node:net";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { CreateMessageRequestSchema, ElicitRequestSchema, type ElicitResult, type Notification } from "@modelcontextprotocol/sdk/types.js";
import { freePort } from "./ports.js";
import { ROOT, runNode, type RunningProcess } from "./processes.js";
import { waitFor } from "./wait-for.js";

/** The example servers `@modelcontextprotocol/sdk` 1.x ships, as built JavaScript. */
export const SDK_EXAMPLES = join(ROOT, "node_modules/@modelcontextprotocol/sdk/dist/esm/examples/server");
/** Puts an unmodified example's `listen` on 127.0.0.1 and a free port (most listen on 3000 or 8000, on every interface). */
const LISTEN_ON = join(ROOT, "test/fixtures/listen-on.mjs");

export interface RunningExample extends RunningProcess {
  mcpUrl: string;
  port: number;
  authPort?: number;
}

/**
 * An HTTP example server, unmodified, on a free loopback port; resolves once it accepts
 * connections. `withAuthServer`: the example also starts its in-memory OAuth server, on a port of its own.
 */
export async function startExample(file: string, { withAuthServer = false } = {}): Promise<RunningExample> {
  const port = await freePort();
  const authPort = withAuthServer ? await freePort() : undefined;
  const env: NodeJS.ProcessEnv = { EXAMPLE_PORT: String(port), PORT: String(port), MCP_PORT: String(port) };
  if (authPort !== undefined) Object.assign(env, { EXAMPLE_AUTH_PORT: String(authPort), MCP_AUTH_PORT: String(authPort) });
  const running = runNode(["--import", LISTEN_ON, join(SDK_EXAMPLES, file)], env);
  await waitFor(
    async () => {
      if (running.proc.exitCode !== null) throw new Error(`${file} exited: ${running.output()}`);
      return (await accepts(port)) && (authPort === undefined || (await accepts(authPort)));
    },
    { timeoutMs: 15_000, what: `${file} listening` },
  );
  return { ...running, port, mcpUrl: `http://127.0.0.1:${port}/mcp`, ...(authPort === undefined ? {} : { authPort }) };
}

/** A stdio example as an upstream's `stdio` setting, and as the SDK's stdio transport runs it. */
export function exampleStdio(file: string): { command: string; args: string[] } {
  return { command: process.execPath, args: [join(SDK_EXAMPLES, file)] };
}

function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection({ host: "127.0.0.1", port });
    socket.once("connect", () => (socket.end(), resolve(true)));
    socket.once("error", () => resolve(false));
  });
}

/** What a caller saw of one run: the questions it was asked and the notifications it got, in order. */
export interface Seen {
  asked: Array<{ method: string; message?: string }>;
  notifications: string[];
}

export interface ExampleClientOptions {
  /** Answer form elicitations with this content (declares the elicitation capability). */
  elicit?: (message: string) => ElicitResult | Promise<ElicitResult>;
  /** Answer sampling requests with this text (declares the sampling capability). */
  sample?: (prompt: string) => string | Promise<string>;
  /** Declare URL-mode elicitation too (its requests go to `elicit` as well). */
  urlElicitation?: boolean;
  /** Sent with every HTTP request (a bearer token). */
  headers?: Record<string, string>;
}

/**
 * The real SDK 1.x client, over Streamable HTTP (`target` a URL) or stdio (`target` a command), recording
 * what it is asked and what it is told. Notifications are kept as `method: what they say`, with
 * the timestamps examples put in their log lines taken out, so two runs compare equal.
 */
export async function exampleClient(target: string | { command: string; args: string[] }, options: ExampleClientOptions = {}) {
  const elicitation = options.urlElicitation ? { form: {}, url: {} } : { form: {} };
  const capabilities = { ...(options.elicit ? { elicitation } : {}), ...(options.sample ? { sampling: {} } : {}) };
  const client = new Client({ name: "sdk-examples-test", version: "1.0.0" }, { capabilities });
  const seen: Seen = { asked: [], notifications: [] };
  const { elicit, sample } = options;
  if (elicit)
    client.setRequestHandler(ElicitRequestSchema, async (req) => {
      seen.asked.push({ method: req.method, message: req.params.message });
      return elicit(req.params.message);
    });
  if (sample)
    client.setRequestHandler(CreateMessageRequestSchema, async (req) => {
      const first = req.params.messages[0]?.content;
      const prompt = first && "text" in first ? String(first.text) : "";
      seen.asked.push({ method: req.method, message: prompt });
      return { role: "assistant", model: "test-model", content: { type: "text", text: await sample(prompt) } };
    });
  // A task's status notifications are hints the receiver may send (https://modelcontextprotocol.io/specification/2025-11-25/basic/utilities/tasks,
  // Task Status Notification); through taskgate they are the front task's, as many as its own pace: not compared.
  client.fallbackNotificationHandler = async (n: Notification) => {
    if (n.method !== "notifications/tasks/status") seen.notifications.push(describeNotification(n));
  };
  // Told when the server accepted the client's GET stream: what a server sends outside any request goes there.
  let listening = false;
  const watchGet: typeof fetch = async (input, init) => {
    const response = await fetch(input, init);
    if ((init?.method ?? "GET") === "GET" && response.ok) listening = true;
    return response;
  };
  const transport =
    typeof target === "string"
      ? new StreamableHTTPClientTransport(new URL(target), { fetch: watchGet, ...(options.headers ? { requestInit: { headers: options.headers } } : {}) })
      : new StdioClientTransport({ command: target.command, args: target.args, stderr: "ignore" });
  await client.connect(transport);
  /** Resolves once the GET stream is open (HTTP servers that offer one). */
  const untilListening = () => waitFor(() => listening, { what: "the client's GET stream open" });
  /** tools/call, recording its progress notifications with the rest. */
  const call = async (name: string, args: Record<string, unknown>) => {
    const onprogress = (p: { progress: number; total?: number; message?: string }) =>
      void seen.notifications.push(describeNotification({ method: "notifications/progress", params: p }));
    return client.callTool({ name, arguments: args }, undefined, { onprogress });
  };
  return { client, seen, call, untilListening };
}

const ISO_TIME = /\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z/g;

export function describeNotification(n: Notification): string {
  const params = (n.params ?? {}) as Record<string, unknown>;
  if (n.method === "notifications/message") return `${n.method}: ${String(params.level)} ${String(params.data).replace(ISO_TIME, "<time>")}`;
  if (n.method === "notifications/progress") return `${n.method}: ${String(params.progress)}/${String(params.total)} ${String(params.message ?? "")}`;
  return n.method;
}
