import { Hono } from "hono";
import { z } from "zod";
import type { Logger } from "../observability/logger.js";
import type { TaskRecord } from "../store/contract.js";
import { wireError } from "../wire/errors.js";
import type { TaskEngine } from "../tasks/engine.js";
import { isTerminal } from "../tasks/transitions.js";
import { requireToken } from "./auth.js";
import { buildOverview } from "./overview.js";
import { STATUS_PAGE_HTML, STATUS_PAGE_SCRIPT } from "./status-page.js";
import { taskView } from "./view.js";
import { TASKS_2025_VERSION } from "../jsonrpc/versions.js";

const Status = z.enum(["working", "input_required", "completed", "failed", "cancelled"]);
const ListQuery = z.object({
  status: z
    .string()
    .optional()
    .transform((s, ctx) => {
      const parsed = z.array(Status).safeParse(s ? s.split(",") : []);
      if (!parsed.success) ctx.addIssue({ code: "custom", message: `status must be a comma-separated list of ${Status.options.join(", ")}` });
      return parsed.data ?? [];
    }),
  upstream: z.string().min(1).optional(),
  tool: z.string().min(1).optional(),
  cursor: z.string().min(1).optional(),
  limit: z.coerce.number().int().min(1).max(500).default(50),
});

/**
 * The operator's view, on the admin listener: tasks of every principal, one task, cancel one, and
 * a status page. The API is behind the admin token; the page itself holds no data (its script
 * asks the API, with the token the operator gives it).
 */
export function buildAdminApp(engine: TaskEngine, token: string, logger: Logger, recentWindowMs: number): Hono {
  const app = new Hono();
  app.get("/", (c) => c.redirect("/status"));
  app.get("/status", (c) =>
    c.html(STATUS_PAGE_HTML, 200, { "content-security-policy": "default-src 'none'; script-src 'self'; connect-src 'self'; style-src 'unsafe-inline'" }),
  );
  app.get("/status.js", (c) => c.body(STATUS_PAGE_SCRIPT, 200, { "content-type": "text/javascript; charset=utf-8" }));
  app.use("/api/*", requireToken(token));
  app.get("/api/tasks", async (c) => {
    const query = ListQuery.safeParse(c.req.query());
    if (!query.success) return c.json({ error: query.error.issues.map((i) => `${i.path.join(".") || "query"}: ${i.message}`).join("; ") }, 400);
    const { status, upstream, tool, cursor, limit } = query.data;
    const page = await engine.listAll({ status, upstream, tool }, { cursor, limit });
    if (!page) return c.json({ error: "unknown cursor" }, 400);
    return c.json({ tasks: page.tasks.map((t) => taskView(t)), ...(page.nextCursor ? { nextCursor: page.nextCursor } : {}) });
  });
  // The status page's one read per refresh: tasks in flight, recently ended ones, counts.
  app.get("/api/overview", async (c) => c.json(await buildOverview(engine, recentWindowMs)));
  app.get("/api/tasks/:id", async (c) => {
    const task = await engine.get(c.req.param("id"), null);
    return task ? c.json(taskView(task, { detail: true })) : c.json({ error: "task not found" }, 404);
  });
  app.post("/api/tasks/:id/cancel", async (c) => {
    const task = await engine.get(c.req.param("id"), null);
    if (!task) return c.json({ error: "task not found" }, 404);
    if (isTerminal(task.status)) return c.json({ error: `task is already ${task.status}`, task: taskView(task) }, 409);
    // An audit line: who acts here is an operator, not the task's principal.
    logger.info({ taskId: task.id, upstream: task.upstream, tool: task.tool, taskProtocol: task.taskProtocol }, "task cancel requested on the admin API");
    // Each task protocol's own cancel (design: tasks/cancel), on behalf of the task's principal.
    const current =
      task.taskProtocol === TASKS_2025_VERSION
        ? cancelled(await engine.cancelNow(task.id, task.principal))
        : await engine.requestCancel(task.id, task.principal);
    return current ? c.json({ task: taskView(current) }, 202) : c.json({ error: "task not found" }, 404);
  });
  app.notFound((c) => c.json({ error: "not found" }, 404));
  // The store being away is 503 here as on every path: read from the one mapping.
  app.onError((err, c) =>
    ["store_unavailable", "store_unconfirmed"].includes(wireError(err).kind) ? c.json({ error: err.message }, 503) : c.json({ error: "internal error" }, 500),
  );
  return app;
}

function cancelled(outcome: { task: TaskRecord } | { terminal: TaskRecord } | undefined): TaskRecord | undefined {
  return outcome && ("task" in outcome ? outcome.task : outcome.terminal);
}
