import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { admin, ADMIN_TOKEN } from "../helpers/admin.js";
import { launchChromium } from "../helpers/browser.js";
import { modern, WITH_TASKS } from "../helpers/modern.js";
import { freePort } from "../helpers/ports.js";
import { demoStdio, startGateway, type GatewayProcess } from "../helpers/processes.js";
import { waitFor } from "../helpers/wait-for.js";

describe("the status page in a real headless Chromium", () => {
  let gw: GatewayProcess;
  let adminUrl: string;
  let browser: Browser;
  beforeAll(async () => {
    const port = await freePort();
    adminUrl = `http://127.0.0.1:${port}`;
    gw = await startGateway({
      admin: { port, token: ADMIN_TOKEN },
      tasks: { detachAfterMs: 100, statusWriteIntervalMs: 100, cancelGraceMs: 100 },
      upstreams: [{ name: "demo", path: "/mcp", stdio: demoStdio() }],
    });
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
    await gw?.stop();
  });

  it("shows tasks in flight with their progress, refreshing by itself, and drops them once they end", async () => {
    const started = await modern(gw.mcpUrl, "tools/call", { name: "sleep", arguments: { seconds: 30, progressIntervalMs: 300 } }, { capabilities: WITH_TASKS });
    const taskId = started.body.result.taskId as string;
    const page = await browser.newPage();
    try {
      await page.goto(`${adminUrl}/status#token=${ADMIN_TOKEN}`);
      const progress = page.locator(`tr[data-task-id="${taskId}"] td.progress`);
      await progress.filter({ hasText: /Slept/ }).waitFor({ timeout: 10_000 });
      const first = await progress.textContent();
      // No reload from here on: the page's own refresh must bring the new progress.
      await waitFor(async () => {
        const now = await progress.textContent({ timeout: 1_000 }).catch(() => null);
        return now && now !== first;
      }, { timeoutMs: 10_000, intervalMs: 100, what: "the page to show newer progress by itself" });
      expect(await page.locator(`tr[data-task-id="${taskId}"] td.status`).textContent()).toBe("working");
      expect(page.url()).not.toContain(ADMIN_TOKEN); // the fragment is dropped once read

      expect((await admin(adminUrl, `/api/tasks/${taskId}/cancel`, { method: "POST" })).status).toBe(202);
      await page.locator(`tr[data-task-id="${taskId}"]`).waitFor({ state: "detached", timeout: 10_000 });
    } finally {
      await page.close();
    }
  });

  it("asks for the token again when it is refused", async () => {
    const page = await browser.newPage();
    try {
      await page.goto(`${adminUrl}/status#token=not-the-admin-token`);
      await page.locator("#error", { hasText: "refused" }).waitFor({ timeout: 10_000 });
      expect(await page.locator("#login").isVisible()).toBe(true);
      expect(await page.locator("tbody tr").count()).toBe(0);
    } finally {
      await page.close();
    }
  });
});
