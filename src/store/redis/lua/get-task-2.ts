import type { LuaScript } from "../scripts.js";
import { TASK_LUA_PRELUDE } from "./common.js";

/**
 * get-task-2: read a task in one round trip, its hash and outcome from the same instant.
 * KEYS: 1 task hash, 2 outcome
 * ARGV: 1 principal the task must belong to, '' = any (operators)
 * Returns: {1, fields, outcome}; {-1} not found (or another principal's)
 */
export const getTask: LuaScript = {
  name: "getTask",
  numberOfKeys: 2,
  lua: `${TASK_LUA_PRELUDE}
if not visible_status(ARGV[1]) then return {-1} end
local c = current()
return {1, c[1], c[2]}
`,
};
