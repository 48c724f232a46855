import { spawn } from "node:child_process";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { HttpConnector } from "../../src/upstream/http/http-connector.js";
import { freePort } from "../helpers/ports.js";
import { waitFor } from "../helpers/wait-for.js";
import { EVERYTHING, httpConfig, testLogger, textOf } from "../fixtures/upstreams.js";

describe("Streamable HTTP connector against server-everything", () => {
  let connector: HttpConnector;
  let stop: () => Promise<void>;

  beforeAll(async () => {
    const port = await freePort();
    const proc = spawn(process.execPath, [EVERYTHING, "streamableHttp"], { env: { ...process.env, PORT: String(port) }, stdio: ["ignore", "pipe", "pipe"] });
    const exited = new Promise<void>((r) => proc.once("exit", () => r()));
    stop = async () => {
      proc.kill("SIGKILL");
      await exited;
    };
    let output = "";
    proc.stderr.on("data", (chunk: Buffer) => (output += chunk.toString()));
    proc.stdout.on("data", (chunk: Buffer) => (output += chunk.toString()));
    await waitFor(() => output.includes(`listening on port ${port}`), { what: "server-everything listening" });
    connector = new HttpConnector("everything-http", httpConfig(`http://127.0.0.1:${port}/mcp`), testLogger);
    await connector.start();
  });

  afterAll(async () => {
    await connector?.close();
    await stop?.();
  });

  it("initializes and gives each of many concurrent echo calls its own response", async () => {
    expect(connector.initializeResult()?.capabilities).toHaveProperty("tools");
    const messages = Array.from({ length: 30 }, (_, i) => `m${i}`);
    const responses = await Promise.all(
      messages.map((message) => connector.request({ method: "tools/call", params: { name: "echo", arguments: { message } } })),
    );
    expect(responses.map(textOf)).toEqual(messages.map((m) => `Echo: ${m}`));
  });
});
