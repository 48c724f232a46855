import type { TaskChange, TaskEnding } from "../contract.js";
import { encodeOutcome } from "../task-fields.js";
import type { RedisKeys } from "./keys.js";
import { TRANSITION_SCRIPTS } from "./lua/transitions.js";
import type { LuaScript } from "./scripts.js";

type Args = (string | number)[];

/**
 * The script of a named transition and its ARGV, in the order its header lists them: every
 * transition script takes the fence and the hint channel first (lua/common.ts `transitionLua`),
 * then what the change itself writes.
 */
export function transitionCall(keys: RedisKeys, id: string, change: TaskChange): { script: LuaScript; args: Args } {
  const fence = [change.principal ?? "", change.leaseToken ?? "", change.now, keys.taskChannel(id)];
  return { script: TRANSITION_SCRIPTS[change.kind], args: [...fence, ...argsOf(change)] };
}

function argsOf(change: TaskChange): Args {
  switch (change.kind) {
    case "start-input":
      return Object.entries(change.addInputRequests).flatMap(([key, request]) => [key, JSON.stringify(request)]);
    case "withdraw-input":
      return change.removeInputRequests;
    case "set-status-message":
      return change.statusMessage === null ? [] : [change.statusMessage];
    case "bind-upstream-task":
      return [change.upstreamTask.taskId, change.upstreamTask.session ?? "", change.ttlMs ?? ""];
    case "bind-stream":
      return [change.stream.requestId, change.stream.lastEventId, change.stream.session ?? ""];
    case "detach":
    case "request-cancel":
      return [];
    case "queue":
      return [JSON.stringify(change.requestParams)];
    case "start-queued":
      return [change.keepParams ? "1" : ""];
    case "complete":
    case "fail":
      return endingArgs(change);
    case "cancel":
      return [change.cancelRequested ? "1" : "", ...endingArgs(change)];
  }
}

/** lua/ending.ts: outcome JSON or '', a shorter ttlMs or '', then the statusMessage only when given. */
function endingArgs(change: TaskEnding): Args {
  const args: Args = [change.outcome ? encodeOutcome(change.outcome) : "", change.ttlMs ?? ""];
  if (change.statusMessage !== undefined) args.push(change.statusMessage);
  return args;
}
