import type { InputRequest, NewTask, StreamPosition, TaskChange, TaskOutcome, TaskProtocol, TaskRecord, TaskView, UpstreamTaskRef } from "./contract.js";
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
  if (task.queued) pairs.push(["queued", "1"]);
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
    case "queue":
      set.push(["queued", "1"], ["requestParams", JSON.stringify(change.requestParams)]);
      break;
    case "start-queued":
      del.push("queued");
      if (!change.keepParams) del.push("requestParams");
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

/** A stored field read back: each reader names the field, so a malformed task says which part. */
class MalformedTask extends Error {
  constructor(field: string, value: unknown) {
    super(`malformed task field ${field}: ${JSON.stringify(value)?.slice(0, 100)}`);
    this.name = "MalformedTask";
  }
}

const INT = /^-?\d+$/;
const STATUSES: ReadonlySet<string> = new Set(["working", "input_required", "completed", "failed", "cancelled"]);

function text(fields: TaskFields, field: string): string {
  const value = fields.get(field);
  if (value === undefined) throw new MalformedTask(field, value);
  return value;
}

function int(fields: TaskFields, field: string): number {
  return intOf(field, fields.get(field));
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function objectJson(field: string, json: string): Record<string, unknown> {
  const value: unknown = JSON.parse(json);
  if (!isObject(value)) throw new MalformedTask(field, value);
  return value;
}

function inputRequest(field: string, json: string): InputRequest {
  const value: unknown = JSON.parse(json);
  if (!isObject(value) || typeof value.method !== "string" || (value.params !== undefined && !isObject(value.params))) throw new MalformedTask(field, value);
  return value.params === undefined ? { method: value.method } : { method: value.method, params: value.params };
}

/** `{result}` (an object), else `{error}` (code, message, data): fields beyond these are dropped. */
function outcomeOf(json: string): TaskOutcome {
  const value: unknown = JSON.parse(json);
  if (isObject(value) && isObject(value.result)) return { result: value.result };
  const error = isObject(value) ? value.error : undefined;
  if (!isObject(error) || typeof error.code !== "number" || typeof error.message !== "string") throw new MalformedTask("outcome", value);
  return { error: "data" in error ? { code: error.code, message: error.message, data: error.data } : { code: error.code, message: error.message } };
}

/**
 * Reading validates: another replica running a different version may have written the task.
 * Throws on a malformed one: that is a defect to see, not an absent task. Checked by hand rather
 * than by a schema: every poll reads a task, and a schema copied each field on every read.
 */
export function decodeTask(fields: TaskFields, outcome: string | null | undefined): TaskRecord {
  const code = fields.get(PROTOCOL_FIELD);
  const taskProtocol = code === "A" || code === "B" || code === "U" ? PROTOCOL_OF_CODE[code] : undefined;
  if (taskProtocol === undefined) throw new MalformedTask(PROTOCOL_FIELD, code);
  const status = fields.get("status");
  if (status === undefined || !STATUSES.has(status)) throw new MalformedTask("status", status);
  const cancelRequested = fields.get("cancelRequested");
  if (cancelRequested !== "0" && cancelRequested !== "1") throw new MalformedTask("cancelRequested", cancelRequested);
  const parked = fields.get("parked");
  if (parked !== undefined && parked !== "1") throw new MalformedTask("parked", parked);
  // Fields in one order, optional ones only when stored: every record read has the same shape.
  const task = {
    id: text(fields, "id"),
    principal: text(fields, "principal"),
    taskProtocol,
    upstream: text(fields, "upstream"),
    tool: text(fields, "tool"),
    status,
  } as TaskRecord;
  optional(task, fields, "statusMessage");
  task.createdAt = int(fields, "createdAt");
  task.lastUpdatedAt = int(fields, "lastUpdatedAt");
  task.ttlMs = int(fields, "ttlMs");
  task.pollIntervalMs = int(fields, "pollIntervalMs");
  task.revision = int(fields, "revision");
  task.owner = text(fields, "owner");
  optional(task, fields, "upstreamRequestId");
  optional(task, fields, "frontSession");
  task.cancelRequested = cancelRequested === "1";
  task.parked = parked === "1";
  task.clientCapabilities = objectJson("clientCapabilities", text(fields, "clientCapabilities"));
  // Tasks written before attempts were counted read as the first.
  task.attempt = fields.has("attempt") ? int(fields, "attempt") : 1;
  const requestParams = fields.get("requestParams");
  if (requestParams !== undefined) task.requestParams = objectJson("requestParams", requestParams);
  optional(task, fields, "upstreamTaskId");
  optional(task, fields, "upstreamSession");
  optional(task, fields, "lastEventId");
  if (fields.get("queued") === "1") task.queued = true;
  task.inputRequests = {};
  task.inputResponses = {};
  for (const [field, value] of fields) {
    if (field.startsWith("in:")) task.inputRequests[field.slice(3)] = inputRequest(field, value);
    else if (field.startsWith("ans:")) task.inputResponses[field.slice(4)] = JSON.parse(value) as unknown;
  }
  if (outcome !== null && outcome !== undefined) task.outcome = outcomeOf(outcome);
  return task;
}

type OptionalText = "statusMessage" | "upstreamRequestId" | "frontSession" | "upstreamTaskId" | "upstreamSession" | "lastEventId";

function optional(task: TaskRecord, fields: TaskFields, field: OptionalText): void {
  const value = fields.get(field);
  if (value !== undefined) task[field] = value;
}

/** The hash fields a TaskView is read from, in the order decodeTaskView takes their values. */
export const VIEW_FIELDS = ["status", "principal", "id", "createdAt", "lastUpdatedAt", "ttlMs", "pollIntervalMs", "statusMessage", "parked"] as const;

/**
 * A TaskView from a store's fields, checked as decodeTask checks them: `values` in VIEW_FIELDS
 * order (null or missing: not stored), `inputs` the `in:` fields as name, JSON, name, JSON …,
 * `outcome` the stored outcome (null: none, or not read).
 */
export function decodeTaskView(values: readonly unknown[], inputs: readonly string[], outcome: string | null): TaskView {
  const [status, , id, createdAt, lastUpdatedAt, ttlMs, pollIntervalMs, statusMessage, parked] = values.map((v) => (typeof v === "string" ? v : undefined));
  if (status === undefined || !STATUSES.has(status)) throw new MalformedTask("status", status);
  if (parked !== undefined && parked !== "1") throw new MalformedTask("parked", parked);
  if (id === undefined) throw new MalformedTask("id", id);
  const view = { id, status } as TaskView;
  if (statusMessage !== undefined) view.statusMessage = statusMessage;
  view.createdAt = intOf("createdAt", createdAt);
  view.lastUpdatedAt = intOf("lastUpdatedAt", lastUpdatedAt);
  view.ttlMs = intOf("ttlMs", ttlMs);
  view.pollIntervalMs = intOf("pollIntervalMs", pollIntervalMs);
  view.parked = parked === "1";
  view.inputRequests = {};
  for (let i = 0; i + 1 < inputs.length; i += 2) view.inputRequests[inputs[i]!.slice(3)] = inputRequest(inputs[i]!, inputs[i + 1]!);
  if (outcome !== null) view.outcome = outcomeOf(outcome);
  return view;
}

function intOf(field: string, value: string | undefined): number {
  if (value === undefined || !INT.test(value)) throw new MalformedTask(field, value);
  return Number(value);
}
