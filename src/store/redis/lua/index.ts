import type { LuaScript } from "../scripts.js";
import { acquireLock } from "./acquire-lock-1.js";
import { recordFormat } from "./record-format-1.js";
import { TRANSITION_SCRIPTS } from "./transitions.js";
import { claimOrphan } from "./claim-orphan-3.js";
import { endOrphan } from "./end-orphan-3.js";
import { admitTask } from "./admit-task-1.js";
import { addInputResponses } from "./add-input-responses-2.js";
import { createTask } from "./create-task-2.js";
import { getTask } from "./get-task-2.js";
import { viewTask } from "./view-task-2.js";
import { probeTask } from "./probe-task-2.js";
import { lapsedLeases } from "./lapsed-leases-1.js";
import { replicaLease } from "./replica-lease-1.js";
import { takeInputResponses } from "./take-input-responses-3.js";
import { holdTask } from "./hold-task-1.js";

/**
 * Every script the Redis store registers, one file each beside this one (`<name>-<key count>.ts`).
 * Sessions need none: GETEX, SET PX and DEL are each atomic already.
 */
export const allScripts: readonly LuaScript[] = [
  createTask,
  getTask,
  viewTask,
  ...Object.values(TRANSITION_SCRIPTS),
  addInputResponses,
  takeInputResponses,
  replicaLease,
  lapsedLeases,
  probeTask,
  endOrphan,
  claimOrphan,
  acquireLock,
  admitTask,
  recordFormat,
  holdTask,
];
