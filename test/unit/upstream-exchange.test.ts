import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { UpstreamClient } from "../../src/upstream/http/client.js";
import { eachChunk } from "../../src/upstream/http/each-chunk.js";
import { RequestAbort } from "../../src/upstream/http/request-abort.js";
import { waitFor } from "../helpers/wait-for.js";

const JSON_HEADERS = { "content-type": "application/json" };
const opened: { server: Server; client: UpstreamClient }[] = [];

/**
 * A loopback server answering with `handle`, a client for it, the connections it saw, the one each
 * request came on, and those that closed.
 */
async function serve(handle: (req: IncomingMessage, res: ServerResponse) => void) {
  const sockets: Socket[] = [];
  const served: Socket[] = [];
  const closed: Socket[] = [];
  const server = createServer((req, res) => {
    served.push(req.socket);
    handle(req, res);
  });
  server.on("connection", (socket: Socket) => {
    sockets.push(socket);
    socket.on("close", () => closed.push(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const client = new UpstreamClient(2_000);
  opened.push({ server, client });
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`;
  return { url, client, sockets, served, closed };
}

afterEach(async () => {
  for (const { server, client } of opened.splice(0)) {
    client.close();
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
});

const read = async (body: Parameters<typeof eachChunk>[0]) => {
  const chunks: Uint8Array[] = [];
  await eachChunk(body, (chunk) => chunks.push(chunk));
  return Buffer.concat(chunks).toString("utf8");
};

describe("an upstream exchange (undici's dispatch, our handler)", () => {
  it("hands over the status, the headers and every chunk in order, written over time", async () => {
    const { url, client } = await serve((_req, res) => {
      res.writeHead(201, { "content-type": "text/event-stream", "x-twice": ["a", "b"] });
      res.write("one,");
      setTimeout(() => res.write("two,"), 20);
      setTimeout(() => res.end("three"), 40);
    });
    const response = await client.post(url, { headers: JSON_HEADERS, body: "{}", signal: new RequestAbort() });
    expect([response.status, response.ok, response.header("content-type"), response.header("x-twice")]).toEqual([201, true, "text/event-stream", "a, b"]);
    expect(await read(response.body)).toBe("one,two,three");
  });

  it("holds what arrives before anyone reads, past its bound too, and loses none of it", async () => {
    const big = "x".repeat(1024 * 1024);
    const { url, client, sockets } = await serve((_req, res) => res.end(big));
    const response = await client.get(url, {}, new AbortController().signal);
    // Read only once the server has sent several times the bound.
    await waitFor(() => (sockets[0]?.bytesWritten ?? 0) > 256 * 1024, { timeoutMs: 2_000, intervalMs: 5, what: "the server to send 256 KiB" });
    const text = await read(response.body);
    expect(text.length).toBe(big.length);
    expect(text === big).toBe(true);
  });

  it("leaves the connection of a body read to its end open, for the next request", async () => {
    const { url, client, closed } = await serve((_req, res) => res.end("ok"));
    for (let i = 0; i < 3; i++) {
      const response = await client.post(url, { headers: JSON_HEADERS, body: "{}", signal: new RequestAbort() });
      expect(await read(response.body)).toBe("ok");
    }
    expect(closed).toEqual([]);
  });

  it("rejects the reader when the connection breaks in the middle of the body", async () => {
    const { url, client } = await serve((_req, res) => {
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.write("partial");
      setTimeout(() => res.socket?.destroy(), 20);
    });
    const response = await client.post(url, { headers: JSON_HEADERS, body: "{}", signal: new RequestAbort() });
    await expect(read(response.body)).rejects.toThrow();
  });

  it("rejects with what the reader threw, and closes the connection", async () => {
    const { url, client, served, closed } = await serve((_req, res) => {
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.write("x");
    });
    const response = await client.post(url, { headers: JSON_HEADERS, body: "{}", signal: new RequestAbort() });
    const reading = eachChunk(response.body, () => {
      throw new Error("too long");
    });
    await expect(reading).rejects.toThrow("too long");
    await waitFor(() => closed.includes(served[0]!), { timeoutMs: 2_000, what: "the server to see its connection closed" });
  });

  it("closes the connection of a body discarded unread, and keeps one discarded after its end", async () => {
    const { url, client, served, closed } = await serve((req, res) => {
      if (req.url === "/mcp?open") return void res.writeHead(200, { "content-type": "text/event-stream" }).write(":");
      res.writeHead(202).end();
    });
    const done = await client.post(url, { headers: JSON_HEADERS, body: "{}", signal: new RequestAbort() });
    await done.discard();
    const open = await client.post(`${url}?open`, { headers: JSON_HEADERS, body: "{}", signal: new RequestAbort() });
    await open.discard();
    await waitFor(() => closed.includes(served[1]!), { timeoutMs: 2_000, what: "the server to see the unfinished exchange's connection closed" });
    const after = await client.post(url, { headers: JSON_HEADERS, body: "{}", signal: new RequestAbort() });
    await after.discard();
    expect(served.length).toBe(3);
    expect(closed).not.toContain(served[0]);
    expect(closed).not.toContain(served[2]);
  });

  it("an abort before the answer rejects the request with its reason, and one in the body rejects the reader", async () => {
    const { url, client, served, closed } = await serve((req, res) => {
      if (req.url === "/mcp?late") return void setTimeout(() => res.writeHead(200).end("late"), 5_000);
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.write("started");
    });
    const early = new RequestAbort();
    const posting = client.post(`${url}?late`, { headers: JSON_HEADERS, body: "{}", signal: early });
    const reason = new Error("cancelled by the caller");
    setTimeout(() => early.abort(reason), 20);
    await expect(posting).rejects.toBe(reason);

    const stop = new AbortController();
    const response = await client.get(url, {}, stop.signal);
    const reading = read(response.body);
    stop.abort(new Error("nobody waits"));
    await expect(reading).rejects.toThrow("nobody waits");
    await waitFor(() => served.length === 2 && served.every((socket) => closed.includes(socket)), {
      timeoutMs: 2_000,
      what: "the server to see both connections closed",
    });
  });

  it("an abort before the request is sent stops it: the server never sees it", async () => {
    let seen = 0;
    const { url, client } = await serve((_req, res) => {
      seen++;
      res.end("ok");
    });
    const aborted = new AbortController();
    aborted.abort(new Error("given up"));
    await expect(client.get(url, {}, aborted.signal)).rejects.toThrow("given up");
    const later = new RequestAbort();
    const posting = client.post(url, { headers: JSON_HEADERS, body: "{}", signal: later });
    later.abort(new Error("given up at once"));
    await expect(posting).rejects.toThrow("given up at once");
    const response = await client.post(url, { headers: JSON_HEADERS, body: "{}", signal: new RequestAbort() });
    expect(await read(response.body)).toBe("ok");
    expect(seen).toBe(1);
  });
});
