import { createServer, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RequestIdResponse } from "../../src/http/request-id-response.js";

// Each path answers as one way of writing a reply does; the id is set as observe sets it.
const shared = { "content-type": "application/json" };
const replies: Record<string, (res: RequestIdResponse) => void> = {
  "/object": (res) => res.writeHead(200, shared).end("{}"),
  "/message": (res) => res.writeHead(201, "Made", { "content-type": "text/plain" }).end("made"),
  "/own": (res) => res.writeHead(200, { "x-request-id": "the reply's own" }).end(),
  "/implicit": (res) => res.end("plain"),
  "/array": (res) => res.writeHead(200, ["content-type", "text/plain"]).end("raw"),
  "/set-before": (res) => {
    res.setHeader("x-request-id", "set before");
    res.writeHead(200).end();
  },
};

let server: Server;
let base: string;
beforeAll(async () => {
  server = createServer({ ServerResponse: RequestIdResponse }, (req, res: ServerResponse) => {
    const path = req.url ?? "";
    const tagged = res as RequestIdResponse;
    if (path !== "/untagged") tagged.requestId = `id-of-${path.slice(1)}`;
    (replies[path] ?? ((r: RequestIdResponse) => r.writeHead(200, { "content-type": "text/plain" }).end()))(tagged);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

const idOf = async (path: string) => {
  const res = await fetch(`${base}${path}`);
  await res.text();
  return { status: res.status, id: res.headers.get("x-request-id"), type: res.headers.get("content-type") };
};

describe("RequestIdResponse", () => {
  it("writes the request id with the headers writeHead is given, however the reply is written", async () => {
    expect(await idOf("/object")).toEqual({ status: 200, id: "id-of-object", type: "application/json" });
    expect(await idOf("/message")).toEqual({ status: 201, id: "id-of-message", type: "text/plain" });
    expect(await idOf("/implicit")).toMatchObject({ status: 200, id: "id-of-implicit" });
    expect(await idOf("/array")).toEqual({ status: 200, id: "id-of-array", type: "text/plain" });
  });

  it("never changes the object it is given, which a reply may write again", async () => {
    await idOf("/object");
    await idOf("/object");
    expect(shared).toEqual({ "content-type": "application/json" });
  });

  it("leaves a request id the reply names itself, as setHeader's would be", async () => {
    expect((await idOf("/own")).id).toBe("the reply's own");
    expect((await idOf("/set-before")).id).toBe("set before");
  });

  it("writes none when no id was given", async () => {
    expect((await idOf("/untagged")).id).toBeNull();
  });
});
