import { readFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bearerAuth } from "../helpers/auth.js";
import { launchChromium } from "../helpers/browser.js";
import { freePort } from "../helpers/ports.js";
import { demoStdio, ROOT, startGateway, type GatewayProcess } from "../helpers/processes.js";

const CLIENT = readFileSync(join(ROOT, "test/fixtures/browser-client.js"), "utf8");

/** A web app on its own loopback origin: one page that loads the fetch-only MCP client. */
async function servePage(): Promise<{ origin: string; server: Server }> {
  const port = await freePort();
  const server = createServer((req, res) => {
    if (req.url === "/client.js") res.writeHead(200, { "content-type": "text/javascript" }).end(CLIENT);
    else res.writeHead(200, { "content-type": "text/html" }).end('<!doctype html><title>app</title><script src="/client.js"></script>');
  });
  await new Promise<void>((resolve) => server.listen(port, "127.0.0.1", resolve));
  return { origin: `http://localhost:${port}`, server };
}

describe("a page from another loopback origin uses taskgate through fetch, in headless Chromium", () => {
  let gw: GatewayProcess;
  let app: { origin: string; server: Server };
  let browser: Browser;
  let page: Page;
  beforeAll(async () => {
    // Defaults for Origins: no http.allowedOrigins, a loopback listener. Bearer auth, so every
    // request is preflighted for Authorization and the 401's challenge must be readable.
    gw = await startGateway({
      auth: bearerAuth("alice"),
      tasks: { detachAfterMs: 100, statusWriteIntervalMs: 100 },
      upstreams: [{ name: "demo", path: "/mcp", stdio: demoStdio() }],
    });
    app = await servePage();
    browser = await launchChromium();
    page = await browser.newPage();
    await page.goto(`${app.origin}/`);
    await page.waitForFunction(() => "legacyRun" in globalThis);
  });
  afterAll(async () => {
    await browser?.close();
    await new Promise((r) => app?.server.close(r));
    await gw?.stop();
  });

  it("runs initialize, tools/call and a task of the 2025-11-25 tasks to completion on 2025-11-25", async () => {
    const out: any = await page.evaluate(([url, token]) => (globalThis as any).legacyRun(url, token), [gw.mcpUrl, "tok-alice"]);
    expect(out.unauthorized).toEqual({ status: 401, challenge: expect.stringMatching(/^Bearer /) });
    expect(out.session).toMatch(/.{16,}/);
    expect(out.protocolVersion).toBe("2025-11-25");
    expect(out.echo.content[0].text).toBe("from the page");
    expect(out.streamed).toMatchObject({ sse: true, progress: expect.any(Number), result: { content: [{ text: "Slept 0.3 s" }] } });
    expect(out.streamed.progress).toBeGreaterThan(0);
    expect(out.created.task).toMatchObject({ status: "working" });
    expect(out.ended).toMatchObject({ status: "completed" });
    expect(out.result.content[0].text).toBe("Slept 0.5 s");
  });

  it("runs server/discover, tools/call and a task of the tasks extension to completion on 2026-07-28", async () => {
    const out: any = await page.evaluate(([url, token]) => (globalThis as any).modernRun(url, token), [gw.mcpUrl, "tok-alice"]);
    expect(out.discover.capabilities.extensions).toHaveProperty(["io.modelcontextprotocol/tasks"]);
    expect(out.echo).toMatchObject({ resultType: "complete", content: [{ text: "from the page" }] });
    expect(out.created).toMatchObject({ resultType: "task", status: "working" });
    expect(out.ended).toMatchObject({ status: "completed", result: { content: [{ text: "Slept 1 s" }] } });
  });
});
