import { mkdirSync } from "node:fs";
import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { admin, ADMIN_TOKEN } from "../helpers/admin.js";
import { launchChromium } from "../helpers/browser.js";
import { modern, WITH_TASKS } from "../helpers/modern.js";
import { freePort } from "../helpers/ports.js";
import { demoStdio, ROOT, startGateway, type GatewayProcess } from "../helpers/processes.js";
import { waitFor } from "../helpers/wait-for.js";

/** Where the run leaves the page's screenshot for people to look at (git-ignored). */
const OUTPUT = join(ROOT, "test-output");
const ELICIT = { ...WITH_TASKS, elicitation: { form: {} } };
const REQUIRED = { taskSupport: "required" };

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
      // Per-call processes: the deploy question is tied to its call while other calls run.
      upstreams: [{ name: "demo", path: "/mcp", stdio: demoStdio(), isolation: "per-call", tools: { echo: REQUIRED, crash: REQUIRED, deploy: REQUIRED } }],
    });
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
    await gw?.stop();
  });

  const start = async (name: string, args: Record<string, unknown>, capabilities: Record<string, unknown> = WITH_TASKS) => {
    const taskId = (await modern(gw.mcpUrl, "tools/call", { name, arguments: args }, { capabilities })).body.result.taskId;
    expect(taskId).toBeTypeOf("string");
    return taskId as string;
  };
  const open = async (): Promise<Page> => {
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    await page.goto(`${adminUrl}/status#token=${ADMIN_TOKEN}`);
    return page;
  };
  const inFlight = (page: Page, taskId: string) => page.locator(`#in-flight tr[data-task-id="${taskId}"]`);
  const recent = (page: Page, taskId: string) => page.locator(`#recent tr[data-task-id="${taskId}"]`);

  it("shows tasks in flight with their progress, refreshing by itself, and moves them to the ended ones", async () => {
    const taskId = await start("sleep", { seconds: 30, progressIntervalMs: 300 });
    const page = await open();
    try {
      const progress = inFlight(page, taskId).locator("td.progress");
      await progress.filter({ hasText: /Slept/ }).waitFor({ timeout: 10_000 });
      const first = await progress.textContent();
      // No reload from here on: the page's own refresh must bring the new progress.
      await waitFor(
        async () => {
          const now = await progress.textContent({ timeout: 1_000 }).catch(() => null);
          return now && now !== first;
        },
        { timeoutMs: 10_000, intervalMs: 100, what: "the page to show newer progress by itself" },
      );
      expect(await inFlight(page, taskId).locator("td.status").textContent()).toBe("working");
      // A progress bar, as wide as the share done.
      const width = await inFlight(page, taskId)
        .locator(".bar i")
        .evaluate((e) => Number.parseFloat((e as unknown as { style: { width: string } }).style.width));
      expect(width).toBeGreaterThan(0);
      expect(width).toBeLessThan(100);
      expect(page.url()).not.toContain(ADMIN_TOKEN); // the fragment is dropped once read

      expect((await admin(adminUrl, `/api/tasks/${taskId}/cancel`, { method: "POST" })).status).toBe(202);
      await inFlight(page, taskId).waitFor({ state: "detached", timeout: 10_000 });
      expect(await recent(page, taskId).locator("td.status").textContent({ timeout: 10_000 })).toBe("cancelled");
    } finally {
      await page.close();
    }
  });

  it("counts per upstream, marks a task that waits for input, lists ended ones with their error, and cancels with its button", async () => {
    const running = await start("sleep", { seconds: 60, progressIntervalMs: 200 });
    const toCancel = await start("sleep", { seconds: 60, progressIntervalMs: 5000 });
    const asking = await start("deploy", { service: "billing", seconds: 1 }, ELICIT);
    const completed = await start("echo", { text: "done" });
    const failed = await start("crash", { message: "the disk is full" });
    const page = await open();
    try {
      await inFlight(page, asking).and(page.locator("tr.asking")).waitFor({ timeout: 10_000 });
      expect(await inFlight(page, asking).locator("td.status").textContent()).toBe("input required");
      expect(await recent(page, completed).locator("td.status").textContent({ timeout: 10_000 })).toBe("completed");
      expect(await recent(page, failed).locator("td.error").textContent()).toMatch(/-32000.*the disk is full|the disk is full.*-32000/);
      await inFlight(page, running).locator(".bar i").waitFor({ timeout: 10_000 });

      // Two clicks: the first asks to confirm, the second cancels through the admin API.
      const button = inFlight(page, toCancel).locator("button.cancel");
      await button.click();
      await inFlight(page, toCancel).locator("button.cancel.confirm").click();
      expect(await recent(page, toCancel).locator("td.status").textContent({ timeout: 10_000 })).toBe("cancelled");
      expect((await admin(adminUrl, `/api/tasks/${toCancel}`)).body.status).toBe("cancelled");

      // Counts per upstream: this test's tasks and the first test's cancelled one.
      const count = (status: string) => page.locator(`#counts tr[data-upstream="demo"] td[data-status="${status}"]`).textContent();
      await waitFor(async () => (await count("cancelled")) === "2", { timeoutMs: 10_000, what: "two cancelled counted" });
      expect(await count("working")).toBe("1");
      expect(await count("input_required")).toBe("1");
      expect(await count("completed")).toBe("1");
      expect(await count("failed")).toBe("1");
      expect(await page.locator('.card[data-status="cancelled"] b').textContent()).toBe("2");

      // Progress moved on a little, so the picture shows a bar under way.
      await waitFor(
        async () =>
          (await inFlight(page, running)
            .locator(".bar i")
            .evaluate((e) => Number.parseFloat((e as unknown as { style: { width: string } }).style.width))) > 1,
        { what: "a bar under way" },
      );
      mkdirSync(OUTPUT, { recursive: true });
      await page.screenshot({ path: join(OUTPUT, "status-page.png"), fullPage: true });
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
      expect(await page.locator("#in-flight tbody tr").count()).toBe(0);
    } finally {
      await page.close();
    }
  });
});
