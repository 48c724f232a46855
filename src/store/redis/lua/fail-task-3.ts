import type { LuaScript } from "../scripts.js";
import { transitionLua } from "./common.js";
import { endingLua } from "./ending.js";

/**
 * fail-task-3: the call failed (its error, an isError result under the 2025-11-25 tasks, or the gateway's reason);
 * the task is failed, from working or input_required (task-rules.ts TRANSITION_RULES.fail).
 * KEYS: 1 task hash, 2 outcome, 3 lease
 * ARGV: 1 principal or '' (any); 2 lease token or '' (unfenced); 3 now (epoch ms); 4 hint channel;
 *       5 outcome JSON or ''; 6 a shorter ttlMs or ''; 7 statusMessage (absent: kept)
 * Returns: {1, fields, outcome} failed; {-1} not found (or another principal's);
 *          {-2, fields, outcome} stale lease; {-3, fields, outcome} wrong status (terminal already)
 */
export const failTask: LuaScript = {
  name: "failTask",
  numberOfKeys: 3,
  lua: transitionLua("fail", endingLua("failed", 5)),
};
