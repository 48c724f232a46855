import { describe, expect, it } from "vitest";
import { questionOf, questionsToSend } from "../../src/dialects/tasks-2025-11-25/questions.js";
import { SessionNotices } from "../../src/dialects/tasks-2025-11-25/session-notices.js";
import type { TaskRecord } from "../../src/store/contract.js";

function task(id: string, fields: Partial<TaskRecord> = {}): TaskRecord {
  return {
    id,
    principal: "p",
    taskProtocol: "2025-11-25",
    upstream: "u",
    tool: "t",
    status: "working",
    createdAt: 1,
    lastUpdatedAt: 1,
    ttlMs: 1000,
    pollIntervalMs: 100,
    revision: 1,
    owner: "r",
    cancelRequested: false,
    clientCapabilities: {},
    inputRequests: {},
    inputResponses: {},
    attempt: 1,
    parked: false,
    ...fields,
  };
}

const asking = (id: string, keys: string[], answered: string[] = []) =>
  task(id, {
    status: "input_required",
    lastUpdatedAt: 2,
    inputRequests: Object.fromEntries(keys.map((k) => [k, { method: "elicitation/create", params: { message: k } }])),
    inputResponses: Object.fromEntries(answered.map((k) => [k, { action: "accept" }])),
  });

describe("what each stream of a 2025-11-25 session carries", () => {
  it("tells a status on the task's tasks/result stream while one is open, else on the GET stream, each snapshot once", () => {
    const notices = new SessionNotices();
    const get = notices.open("s", undefined, () => undefined);
    const result = notices.open("s", "t1", () => undefined);
    expect(get.tell(task("t1"))).toBe(false);
    expect(result.tell(task("t1"))).toBe(true);
    expect(result.tell(task("t1"))).toBe(false);
    // Another task has no tasks/result open: the GET stream tells it.
    expect(get.tell(task("t2"))).toBe(true);
    result.close();
    // Told already on tasks/result: the GET stream does not repeat it, but tells the next change.
    expect(get.tell(task("t1"))).toBe(false);
    expect(get.tell(task("t1", { status: "completed", lastUpdatedAt: 5 }))).toBe(true);
  });

  it("gives a question to the first stream that claims it until that stream closes, then to the next", () => {
    const notices = new SessionNotices();
    let rechecked = 0;
    const get = notices.open("s", undefined, () => void rechecked++);
    const result = notices.open("s", "t1", () => undefined);
    expect(get.claim("t1", "k")).toBe(true);
    expect(result.claim("t1", "k")).toBe(false);
    expect(get.claim("t1", "k")).toBe(true);
    get.close();
    expect(result.claim("t1", "k")).toBe(true);
    // Another session never shares claims.
    expect(notices.open("other", undefined, () => undefined).claim("t1", "k")).toBe(true);
    const again = notices.open("s", undefined, () => void rechecked++);
    result.close();
    expect(rechecked).toBe(1);
    expect(again.claim("t1", "k")).toBe(true);
  });
});

describe("questions of the 2025-11-25 tasks on the wire", () => {
  it("sends each unanswered question once per stream, re-id'd on the GET stream, with the related-task _meta", () => {
    const asked = new Set<string>();
    const sent = questionsToSend(asking("T", ["a", "b"], ["b"]), asked, "get", () => true);
    expect(sent).toEqual([
      {
        jsonrpc: "2.0",
        id: "tgi:T:a:get",
        method: "elicitation/create",
        params: { message: "a", _meta: { "io.modelcontextprotocol/related-task": { taskId: "T" } } },
      },
    ]);
    expect(questionsToSend(asking("T", ["a"]), asked, "get", () => true)).toEqual([]);
    expect(questionsToSend(asking("T", ["a"]), new Set(), "result", () => true).map((q) => q.id)).toEqual(["tgi:T:a"]);
    expect(questionsToSend(asking("T", ["a"]), new Set(), "result", () => false)).toEqual([]);
    expect(questionsToSend(task("T"), new Set(), "result", () => true)).toEqual([]);
  });

  it("reads the task and key back from either id, and nothing from other ids", () => {
    expect(questionOf("tgi:T:a")).toEqual({ taskId: "T", key: "a" });
    expect(questionOf("tgi:T:a:get")).toEqual({ taskId: "T", key: "a" });
    expect(questionOf("tgi:T:a:other")).toBeUndefined();
    expect(questionOf(7)).toBeUndefined();
    expect(questionOf("T:a")).toBeUndefined();
  });
});
