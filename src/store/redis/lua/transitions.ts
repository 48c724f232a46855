import type { TaskChange } from "../../contract.js";
import type { LuaScript } from "../scripts.js";
import { bindStream } from "./bind-stream-3.js";
import { bindUpstreamTask } from "./bind-upstream-task-3.js";
import { cancelTask } from "./cancel-task-3.js";
import { completeTask } from "./complete-task-3.js";
import { detachTask } from "./detach-task-3.js";
import { queueTask, startQueued } from "./queue-task-3.js";
import { failTask } from "./fail-task-3.js";
import { requestCancel } from "./request-cancel-3.js";
import { setStatusMessage } from "./set-status-message-3.js";
import { startInput } from "./start-input-3.js";
import { withdrawInput } from "./withdraw-input-3.js";

/** The script of each named transition: one each, with the same name as its rule in task-rules.ts. */
export const TRANSITION_SCRIPTS: Readonly<Record<TaskChange["kind"], LuaScript>> = {
  "start-input": startInput,
  "withdraw-input": withdrawInput,
  "set-status-message": setStatusMessage,
  "bind-upstream-task": bindUpstreamTask,
  "bind-stream": bindStream,
  detach: detachTask,
  queue: queueTask,
  "start-queued": startQueued,
  "request-cancel": requestCancel,
  complete: completeTask,
  fail: failTask,
  cancel: cancelTask,
};
