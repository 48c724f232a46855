import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { createDemoServer } from "./create-server.js";
import type { ServerFactory } from "./http.js";

export interface DemoServerOptions {
  /** Serve Streamable HTTP on this port (0 picks a free one); stdio when omitted. */
  http?: { port: number; host?: string };
  /** Serve only protocol 2026-07-28 (the stateless wire, MRTR questions), written with the SDK 2.x. */
  modern?: boolean;
  /** With `modern`: serve the io.modelcontextprotocol/tasks extension, running `research` as a task of its own. */
  tasksExtension?: boolean;
  /** Operator lines (cancellations, request failures); stderr by default. */
  log?: (line: string) => void;
  /** The task-native server: its tools run as tasks of its own (SDK 1.x task support). */
  nativeTasks?: boolean;
  /** HTTP: keep SSE events in an event store, so a lost response stream can be resumed with Last-Event-ID. */
  eventStore?: boolean;
}

export interface RunningDemoServer {
  close(): Promise<void>;
  /** The port really listened on, in HTTP mode. */
  port?: number;
}

export const DEFAULT_DEMO_HOST = "127.0.0.1";

/**
 * The blocking demo upstream: over stdio by default, or Streamable HTTP at /mcp. Each mode's
 * modules are imported when it is chosen: a gateway's pool starts a stdio demo process per call
 * it isolates, and the plain stdio server needs neither the HTTP transport nor the SDK 2.x.
 */
export async function runDemoServer(opts: DemoServerOptions = {}): Promise<RunningDemoServer> {
  const log = opts.log ?? ((line: string) => void process.stderr.write(`demo server: ${line}\n`));
  if (opts.modern) return (await import("./modern/run.js")).runModernDemoServer(opts, log);
  const factory = await serverFactory(opts.nativeTasks === true, log);
  if (opts.http) {
    const { listenDemoHttp } = await import("./http.js");
    const http = await listenDemoHttp(opts.http.port, opts.http.host ?? DEFAULT_DEMO_HOST, log, factory, { eventStore: opts.eventStore === true });
    return { port: http.port, close: once(http.close) };
  }
  return runOverStdio(factory);
}

/** One server object per connection; the task-native ones share the process's task store. */
async function serverFactory(native: boolean, log: (line: string) => void): Promise<ServerFactory> {
  if (!native) return () => createDemoServer(log);
  const { createNativeDemoServer, nativeState } = await import("./native/native-server.js");
  const state = nativeState();
  return () => createNativeDemoServer(log, state);
}

async function runOverStdio(factory: ServerFactory): Promise<RunningDemoServer> {
  const server = factory();
  // Closing the server aborts its running calls, so no sleeping timer keeps the process alive.
  const close = once(() => server.close());
  process.stdin.once("end", () => void close());
  await server.connect(new StdioServerTransport());
  return { close };
}

/** close() may be called by a signal and by the owner at once; the second call joins the first. */
function once(close: () => Promise<void>): () => Promise<void> {
  let closing: Promise<void> | undefined;
  return () => (closing ??= close());
}
