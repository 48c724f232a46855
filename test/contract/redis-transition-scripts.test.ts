import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { TaskStatus } from "../../src/store/contract.js";
import { createStore } from "../../src/store/index.js";
import { RedisConnection } from "../../src/store/redis/connection.js";
import { RedisKeys } from "../../src/store/redis/keys.js";
import { addInputResponses } from "../../src/store/redis/lua/add-input-responses-2.js";
import { claimOrphan } from "../../src/store/redis/lua/claim-orphan-3.js";
import { createTask } from "../../src/store/redis/lua/create-task-2.js";
import { endOrphan } from "../../src/store/redis/lua/end-orphan-3.js";
import { allScripts } from "../../src/store/redis/lua/index.js";
import { takeInputResponses } from "../../src/store/redis/lua/take-input-responses-3.js";
import { TRANSITION_SCRIPTS } from "../../src/store/redis/lua/transitions.js";
import type { RedisStore } from "../../src/store/redis/redis-store.js";
import { type LuaScript, ScriptRunner } from "../../src/store/redis/scripts.js";
import { TRANSITION_RULES } from "../../src/store/task-rules.js";
import { redisUrl, uniquePrefix } from "../helpers/redis.js";
import { LEASE, newTask } from "./task-store.contract.js";

/**
 * Each task script by itself, called with the KEYS and ARGV its header lists, on a real Redis:
 * it runs from a status its rule allows, refuses one it does not with the documented
 * return, and answers a missing task (or another principal's) as not found.
 */

let prefix: string;
let store: RedisStore;
let connection: RedisConnection;
let scripts: ScriptRunner;
let keys: RedisKeys;
beforeEach(() => {
  prefix = uniquePrefix();
  store = createStore({ redisUrl: redisUrl(), keyPrefix: prefix }) as RedisStore;
  connection = new RedisConnection({ target: { url: redisUrl() }, name: "transition-scripts-test", callTimeoutMs: 2_000 });
  scripts = new ScriptRunner(connection, allScripts);
  keys = new RedisKeys(prefix);
});
afterEach(async () => {
  await store.close();
  await connection.close();
});

/** A task created through the store (lease LEASE held), then put in `status` directly. */
async function taskIn(status: TaskStatus, fields: Record<string, string> = {}): Promise<string> {
  const { id } = await store.createTask(newTask(), LEASE);
  await connection.call((c) => c.hset(keys.task(id), { status, ...fields }));
  return id;
}

async function run(script: LuaScript, id: string, args: (string | number)[]): Promise<{ code: unknown; fields: Record<string, string>; outcome: unknown }> {
  const k = keys.taskKeys(id);
  const reply = (await scripts.run(script, [k.hash, k.outcome, k.lease], args)) as unknown[];
  const pairs = (reply[1] ?? []) as string[];
  const fields: Record<string, string> = {};
  for (let i = 0; i + 1 < pairs.length; i += 2) fields[pairs[i] as string] = pairs[i + 1] as string;
  return { code: reply[0], fields, outcome: reply[2] };
}

interface TransitionCase {
  /** ARGV after the fence and the channel (5..). */
  args: (string | number)[];
  /** A status the rule does not start from. */
  refusedFrom: TaskStatus;
  /** What the change wrote, read from the returned fields and outcome. */
  wrote: (fields: Record<string, string>, outcome: unknown) => void;
  /** Fields the task holds before the change, for the changes that take something away. */
  before?: Record<string, string>;
}

const QUESTION = JSON.stringify({ method: "roots/list" });
const OUTCOME = JSON.stringify({ result: { content: [] } });

const CASES: Record<keyof typeof TRANSITION_SCRIPTS, TransitionCase> = {
  "start-input": {
    args: ["q1", JSON.stringify({ method: "elicitation/create" })],
    refusedFrom: "failed",
    wrote: (f) => expect(f).toMatchObject({ status: "input_required", "in:q1": '{"method":"elicitation/create"}' }),
  },
  "withdraw-input": {
    args: ["q1"],
    refusedFrom: "cancelled",
    before: { "in:q1": QUESTION },
    wrote: (f) => {
      expect(f).not.toHaveProperty("in:q1");
      expect(f.status).toBe("working");
    },
  },
  "set-status-message": {
    args: ["Running tests (1/3)"],
    refusedFrom: "completed",
    wrote: (f) => expect(f.statusMessage).toBe("Running tests (1/3)"),
  },
  "bind-upstream-task": {
    args: ["up-1", "up-session", 30_000],
    refusedFrom: "completed",
    wrote: (f) => expect(f).toMatchObject({ upstreamTaskId: "up-1", upstreamSession: "up-session", ttlMs: "30000" }),
  },
  "bind-stream": {
    args: ["7", "stream-1_42", "up-session"],
    refusedFrom: "failed",
    wrote: (f) => expect(f).toMatchObject({ upstreamRequestId: "7", lastEventId: "stream-1_42", upstreamSession: "up-session" }),
  },
  detach: {
    args: [],
    refusedFrom: "input_required",
    before: { parked: "1" },
    wrote: (f) => expect(f).not.toHaveProperty("parked"),
  },
  queue: {
    args: [JSON.stringify({ name: "sleep", arguments: { seconds: 1 } })],
    refusedFrom: "completed",
    wrote: (f) => expect(f).toMatchObject({ queued: "1", requestParams: '{"name":"sleep","arguments":{"seconds":1}}' }),
  },
  "start-queued": {
    args: [""],
    refusedFrom: "cancelled",
    before: { queued: "1", requestParams: '{"name":"sleep"}' },
    wrote: (f) => {
      expect(f).not.toHaveProperty("queued");
      expect(f).not.toHaveProperty("requestParams");
    },
  },
  "request-cancel": {
    args: [],
    refusedFrom: "failed",
    wrote: (f) => expect(f.cancelRequested).toBe("1"),
  },
  complete: {
    args: [OUTCOME, "", "done"],
    refusedFrom: "cancelled",
    wrote: (f, outcome) => {
      expect(f).toMatchObject({ status: "completed", statusMessage: "done" });
      expect(outcome).toBe(OUTCOME);
    },
  },
  fail: {
    args: [JSON.stringify({ error: { code: -32603, message: "boom" } }), ""],
    refusedFrom: "completed",
    wrote: (f, outcome) => {
      expect(f.status).toBe("failed");
      expect(JSON.parse(outcome as string)).toEqual({ error: { code: -32603, message: "boom" } });
    },
  },
  cancel: {
    args: ["1", "", "", "Client cancelled task execution."],
    refusedFrom: "failed",
    wrote: (f) => expect(f).toMatchObject({ status: "cancelled", cancelRequested: "1", statusMessage: "Client cancelled task execution." }),
  },
};

for (const [kind, c] of Object.entries(CASES) as [keyof typeof CASES, TransitionCase][]) {
  const script = TRANSITION_SCRIPTS[kind];
  const fence = (id: string, principal = "", token = "") => [principal, token, Date.now(), keys.taskChannel(id)];

  describe(`${script.name} (${kind})`, () => {
    it("runs from every status its rule starts from, fenced by the owner's lease, and bumps the revision", async () => {
      for (const from of TRANSITION_RULES[kind].from) {
        const id = await taskIn(from, c.before);
        const done = await run(script, id, [...fence(id, "", LEASE.token), ...c.args]);
        expect(done.code).toBe(1);
        expect(done.fields.revision).toBe("2");
        c.wrote(done.fields, done.outcome);
      }
    });

    it(`refuses from ${c.refusedFrom} with -3 and the stored task, unchanged`, async () => {
      const id = await taskIn(c.refusedFrom, c.before);
      const refused = await run(script, id, [...fence(id), ...c.args]);
      expect(refused.code).toBe(-3);
      expect(refused.fields).toMatchObject({ status: c.refusedFrom, revision: "1" });
    });

    it("refuses a stale lease token with -2, and a missing task or another principal's with -1", async () => {
      const id = await taskIn(TRANSITION_RULES[kind].from[0] as TaskStatus, c.before);
      expect((await run(script, id, [...fence(id, "", "not-the-token"), ...c.args])).code).toBe(-2);
      expect((await run(script, id, [...fence(id, "mallory"), ...c.args])).code).toBe(-1);
      expect((await run(script, "no-such-task", [...fence("no-such-task"), ...c.args])).code).toBe(-1);
      expect(await store.getTask(id, null)).toMatchObject({ revision: 1 });
    });
  });
}

describe("the reaper's scripts", () => {
  // Held under LEASE, whose lapse the reaper names.
  const orphanIn = (status: TaskStatus) => taskIn(status, { "in:q1": QUESTION, "ans:q1": "{}" });
  const head = (id: string, lapsed = LEASE.token) => [Date.now(), keys.taskChannel(id), "the owner stopped", lapsed];
  const END = ["failed", JSON.stringify({ error: { code: -32603, message: "the owner stopped" } })];
  const CLAIM = ["replica-2", "tok-2"];

  it("endOrphan ends a non-terminal task still held under the lapsed lease, failed or cancelled, and nothing else", async () => {
    for (const from of ["working", "input_required"] as const) {
      const id = await orphanIn(from);
      const ended = await run(endOrphan, id, [...head(id), ...END]);
      expect(ended.code).toBe(1);
      expect(ended.fields).toMatchObject({ status: "failed", statusMessage: "the owner stopped", revision: "2" });
      expect(ended.outcome).toBe(END[1]);
    }
    const cancelled = await orphanIn("working");
    expect((await run(endOrphan, cancelled, [...head(cancelled), "cancelled", ""])).fields.status).toBe("cancelled");
    const id = await orphanIn("working");
    await expect(run(endOrphan, id, [...head(id), "completed", ""])).rejects.toThrow(/ends failed or cancelled/);
  });

  it("claimOrphan takes it over: a fresh lease, the next attempt, working, no questions left", async () => {
    const id = await orphanIn("input_required");
    const claimed = await run(claimOrphan, id, [...head(id), ...CLAIM]);
    expect(claimed.code).toBe(1);
    expect(claimed.fields).toMatchObject({ status: "working", owner: "replica-2", attempt: "2", revision: "2" });
    expect(Object.keys(claimed.fields).filter((f) => /^(in|ans):/.test(f))).toEqual([]);
    expect(await connection.call((c) => c.get(keys.taskLease(id)))).toBe("tok-2");
  });

  for (const [script, args] of [
    [endOrphan, END],
    [claimOrphan, CLAIM],
  ] as const) {
    it(`${script.name} refuses a task another lease holds (-2), a terminal one (-3) and a missing one (-1)`, async () => {
      const leased = await taskIn("working");
      expect((await run(script, leased, [...head(leased, "another-lapsed-lease"), ...args])).code).toBe(-2);
      const ended = await orphanIn("completed");
      expect((await run(script, ended, [...head(ended), ...args])).code).toBe(-3);
      expect((await run(script, "no-such-task", [...head("no-such-task"), ...args])).code).toBe(-1);
      expect(await store.getTask(leased, null)).toMatchObject({ revision: 1, status: "working" });
    });
  }
});

describe("create, answer and take", () => {
  it("createTask writes the hash and the lease once, and refuses an id that exists with {-4}", async () => {
    const id = "created-here";
    const k = keys.taskKeys(id);
    const args = ["tok-c", Date.now() + 60_000, keys.taskChannel(id), "status", "working", "revision", "1"];
    expect(await scripts.run(createTask, [k.hash, k.lease], args)).toEqual([1]);
    expect(await scripts.run(createTask, [k.hash, k.lease], [...args.slice(0, 3), "status", "failed", "revision", "1"])).toEqual([-4]);
    expect(await connection.call((c) => c.hgetall(k.hash))).toEqual({ status: "working", revision: "1" });
    expect(await connection.call((c) => c.get(k.lease))).toBe("tok-c");
  });

  const answer = (id: string, principal: string) => {
    const k = keys.taskKeys(id);
    return scripts.run(addInputResponses, [k.hash, k.outcome], [principal, Date.now(), keys.taskChannel(id), "q1", '"yes"', "q9", '"no"']) as Promise<
      unknown[]
    >;
  };
  const take = (id: string, token: string) => {
    const k = keys.taskKeys(id);
    return scripts.run(takeInputResponses, [k.hash, k.outcome, k.lease], [token, Date.now(), keys.taskChannel(id)]) as Promise<unknown[]>;
  };

  it("addInputResponses accepts only outstanding keys, none on a terminal task, and answers {-1} for a missing or another principal's task", async () => {
    const id = await taskIn("input_required", { "in:q1": QUESTION });
    expect((await answer(id, "alice")).slice(0, 2)).toEqual([1, ["q1"]]);
    expect((await answer(id, "alice")).slice(0, 2)).toEqual([1, []]);
    const ended = await taskIn("completed", { "in:q1": QUESTION });
    expect((await answer(ended, "alice")).slice(0, 2)).toEqual([1, []]);
    expect(await answer(id, "mallory")).toEqual([-1]);
    expect(await answer("no-such-task", "alice")).toEqual([-1]);
  });

  it("takeInputResponses hands the owner the answers and sends the task back to working; {-2} for a stale token, {-1} for a missing task", async () => {
    const id = await taskIn("input_required", { "in:q1": QUESTION, "ans:q1": '"yes"' });
    expect(await take(id, "not-the-token")).toEqual([-2]);
    const taken = await take(id, LEASE.token);
    expect(taken.slice(0, 2)).toEqual([1, ["q1", '"yes"']]);
    expect(await store.getTask(id, null)).toMatchObject({ status: "working", inputRequests: {}, inputResponses: {} });
    expect(await take("no-such-task", LEASE.token)).toEqual([-1]);
  });
});
