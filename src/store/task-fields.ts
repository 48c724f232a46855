import { z } from "zod";
import type { InputRequest, NewTask, StreamPosition, TaskChange, TaskOutcome, TaskProtocol, TaskRecord, UpstreamTaskRef } from "./contract.js";
import { TRANSITION_RULES } from "./task-rules.js";
import { TASKS_2025_VERSION } from "../jsonrpc/versions.js";

/**
 * The one flat layout of a task, shared by both stores so memory behaves like Redis (a stored
 * copy, JSON round trips). In Redis it is the task hash: scalars as fields, each input request
 * and each answer as a field of its own, so Lua never decodes (or re-encodes) client JSON.
 * The outcome is JSON kept beside it (Redis: the `:out` key).
 */
export type TaskFields = ReadonlyMap<string, string>;
export type FieldPairs = [field: string, value: string][];

export const inputRequestField = (key: string): string => `in:${key}`;
export const answerField = (key: string): string => `ans:${key}`;
/** Not part of the record: when all the task's keys expire (createdAt + ttlMs). */
export const EXPIRES_AT = "expiresAt";

/**
 * A task's protocol as the store keeps it: the hash field `dialect` holding `A`, `B` or `U`, the
 * encoding every replica has written since the first release. Kept as it is so replicas of the
 * previous and the next version read each other's tasks during a rolling upgrade; only this file
 * knows it.
 */
const PROTOCOL_FIELD = "dialect";
const PROTOCOL_CODE = { [TASKS_2025_VERSION]: "A", extension: "B", none: "U" } as const satisfies Record<TaskProtocol, string>;
const PROTOCOL_OF_CODE = { A: TASKS_2025_VERSION, B: "extension", U: "none" } as const satisfies Record<string, TaskProtocol>;

export function expiresAt(task: Pick<NewTask, "createdAt" | "ttlMs">): number {
  return task.createdAt + task.ttlMs;
}

/** A new task's fields: revision 1, nothing asked or answered yet. */
export function newTaskFields(task: NewTask): FieldPairs {
  const pairs: FieldPairs = [
    ["id", task.id],
    ["principal", task.principal],
    [PROTOCOL_FIELD, PROTOCOL_CODE[task.taskProtocol]],
    ["upstream", task.upstream],
    ["tool", task.tool],
    ["status", task.status],
    ["createdAt", String(task.createdAt)],
    ["lastUpdatedAt", String(task.createdAt)],
    ["ttlMs", String(task.ttlMs)],
    ["pollIntervalMs", String(task.pollIntervalMs)],
    ["revision", "1"],
    ["owner", task.owner],
    ["cancelRequested", "0"],
    ["clientCapabilities", JSON.stringify(task.clientCapabilities)],
    [EXPIRES_AT, String(expiresAt(task))],
    ["attempt", "1"],
  ];
  if (task.requestParams !== undefined) pairs.push(["requestParams", JSON.stringify(task.requestParams)]);
  if (task.statusMessage !== undefined) pairs.push(["statusMessage", task.statusMessage]);
  if (task.upstreamRequestId !== undefined) pairs.push(["upstreamRequestId", task.upstreamRequestId]);
  if (task.parked) pairs.push(["parked", "1"]);
  if (task.frontSession !== undefined) pairs.push(["frontSession", task.frontSession]);
  if (task.upstreamTaskId !== undefined) pairs.push(["upstreamTaskId", task.upstreamTaskId]);
  if (task.upstreamSession !== undefined) pairs.push(["upstreamSession", task.upstreamSession]);
  if (task.lastEventId !== undefined) pairs.push(["lastEventId", task.lastEventId]);
  return pairs;
}

/**
 * The fields a named transition sets and deletes, as its Redis script does (memory store; each
 * script writes its own). Revision, lastUpdatedAt, the outcome and the life are the store's.
 */
export function changeFields(change: TaskChange): { set: FieldPairs; del: string[] } {
  const to = TRANSITION_RULES[change.kind].to;
  const set: FieldPairs = to === undefined ? [] : [["status", to]];
  const del: string[] = [];
  switch (change.kind) {
    case "start-input":
      for (const [key, request] of Object.entries(change.addInputRequests)) set.push([inputRequestField(key), JSON.stringify(request)]);
      break;
    case "withdraw-input":
      del.push(...change.removeInputRequests.map(inputRequestField));
      break;
    case "set-status-message":
      if (change.statusMessage === null) del.push("statusMessage");
      else set.push(["statusMessage", change.statusMessage]);
      break;
    case "bind-upstream-task":
      set.push(...upstreamTaskFields(change.upstreamTask));
      break;
    case "bind-stream":
      set.push(...streamFields(change.stream));
      break;
    case "detach":
      del.push("parked");
      break;
    case "request-cancel":
      set.push(["cancelRequested", "1"]);
      break;
    default:
      if (change.kind === "cancel" && change.cancelRequested) set.push(["cancelRequested", "1"]);
      if (change.statusMessage !== undefined) set.push(["statusMessage", change.statusMessage]);
  }
  return { set, del };
}

function upstreamTaskFields(ref: UpstreamTaskRef): FieldPairs {
  const pairs: FieldPairs = [["upstreamTaskId", ref.taskId]];
  if (ref.session !== undefined) pairs.push(["upstreamSession", ref.session]);
  return pairs;
}

function streamFields(stream: StreamPosition): FieldPairs {
  const pairs: FieldPairs = [
    ["upstreamRequestId", stream.requestId],
    ["lastEventId", stream.lastEventId],
  ];
  if (stream.session !== undefined) pairs.push(["upstreamSession", stream.session]);
  return pairs;
}

export function encodeOutcome(outcome: TaskOutcome): string {
  return JSON.stringify(outcome);
}

/** A missing answer value still counts as an answer: it is stored as JSON null. */
export function encodeAnswer(value: unknown): string {
  return JSON.stringify(value ?? null);
}

const int = z
  .string()
  .regex(/^-?\d+$/)
  .transform(Number);
// Built once: a schema built inside a transform would be rebuilt on every read of a task.
const CapabilitiesJson = z.record(z.string(), z.unknown());
const Scalars = z.object({
  id: z.string(),
  principal: z.string(),
  taskProtocol: z.enum(["A", "B", "U"]).transform((code) => PROTOCOL_OF_CODE[code]),
  upstream: z.string(),
  tool: z.string(),
  status: z.enum(["working", "input_required", "completed", "failed", "cancelled"]),
  statusMessage: z.string().optional(),
  createdAt: int,
  lastUpdatedAt: int,
  ttlMs: int,
  pollIntervalMs: int,
  revision: int,
  owner: z.string(),
  upstreamRequestId: z.string().optional(),
  frontSession: z.string().optional(),
  cancelRequested: z.enum(["0", "1"]).transform((v) => v === "1"),
  parked: z
    .literal("1")
    .optional()
    .transform((v) => v === "1"),
  clientCapabilities: z.string().transform((json) => CapabilitiesJson.parse(JSON.parse(json))),
  // Tasks written before attempts were counted read as the first.
  attempt: int.default(1),
  requestParams: z
    .string()
    .transform((json) => CapabilitiesJson.parse(JSON.parse(json)))
    .optional(),
  upstreamTaskId: z.string().optional(),
  upstreamSession: z.string().optional(),
  lastEventId: z.string().optional(),
});
const InputRequestJson = z.object({ method: z.string(), params: z.record(z.string(), z.unknown()).optional() }) satisfies z.ZodType<InputRequest>;
const OutcomeJson = z.union([
  z.object({ result: z.record(z.string(), z.unknown()) }),
  z.object({ error: z.object({ code: z.number(), message: z.string(), data: z.unknown().optional() }) }),
]) satisfies z.ZodType<TaskOutcome>;

/**
 * Reading validates: another replica running a different version may have written the task.
 * Throws on a malformed one: that is a defect to see, not an absent task.
 */
export function decodeTask(fields: TaskFields, outcome: string | null | undefined): TaskRecord {
  const raw: Record<string, string | undefined> = Object.fromEntries(fields);
  // The stored code under its stored name; Scalars keeps only the fields it names.
  raw.taskProtocol = raw[PROTOCOL_FIELD];
  const scalars = Scalars.parse(raw);
  // Object.assign, not a spread: on Node 20 (V8 11.3) spreading an object this wide gives every
  // copy a map of its own (about 450 bytes per record held, and more GC work per read).
  const task: TaskRecord = Object.assign({}, scalars, { inputRequests: {}, inputResponses: {} });
  for (const [field, value] of fields) {
    if (field.startsWith("in:")) task.inputRequests[field.slice(3)] = InputRequestJson.parse(JSON.parse(value));
    else if (field.startsWith("ans:")) task.inputResponses[field.slice(4)] = JSON.parse(value) as unknown;
  }
  if (outcome !== null && outcome !== undefined) task.outcome = OutcomeJson.parse(JSON.parse(outcome));
  return task;
}
