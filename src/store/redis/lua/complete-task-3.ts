import type { LuaScript } from "../scripts.js";
import { transitionLua } from "./common.js";
import { endingLua } from "./ending.js";

/**
 * complete-task-3: the call answered; the task is completed with its result, from working or
 * input_required (task-rules.ts TRANSITION_RULES.complete). Never leaves a terminal status.
 * KEYS: 1 task hash, 2 outcome, 3 lease
 * ARGV: 1 principal or '' (any); 2 lease token or '' (unfenced); 3 now (epoch ms); 4 hint channel;
 *       5 outcome JSON or ''; 6 a shorter ttlMs or ''; 7 statusMessage (absent: kept)
 * Returns: {1, fields, outcome} completed; {-1} not found (or another principal's);
 *          {-2, fields, outcome} stale lease; {-3, fields, outcome} wrong status (terminal already)
 */
export const completeTask: LuaScript = {
  name: "completeTask",
  numberOfKeys: 3,
  lua: transitionLua("complete", endingLua("completed", 5)),
};
