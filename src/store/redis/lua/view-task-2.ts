import { TERMINAL_STATUSES } from "../../task-rules.js";
import { VIEW_FIELDS } from "../../task-fields.js";
import type { LuaScript } from "../scripts.js";
import { luaStatus, luaStatusSet } from "./common.js";

/**
 * view-task-2: what tasks/get renders of a task (TaskView), in one round trip: VIEW_FIELDS (in that order),
 * the open input requests while it is input_required, the outcome once it ended if asked for.
 * A poll reads no more than it answers with: not the call's arguments nor the client's
 * capabilities, which get-task-2 returns with the rest of the record.
 * KEYS: 1 task hash, 2 outcome
 * ARGV: 1 principal the task must belong to, '' = any; 2 '1' to read the outcome
 * Returns: {1, fields, input request pairs, outcome ('' = none)}; {-1} not found (or another principal's)
 */
export const viewTask: LuaScript = {
  name: "viewTask",
  numberOfKeys: 2,
  lua: `
local TERMINAL = ${luaStatusSet(TERMINAL_STATUSES)}
local f = redis.call('HMGET', KEYS[1], ${VIEW_FIELDS.map((name) => `'${name}'`).join(", ")})
if not f[1] or (ARGV[1] ~= '' and f[2] ~= ARGV[1]) then return {-1} end
local inputs = {}
if f[1] == ${luaStatus("input_required")} then
  local all = redis.call('HGETALL', KEYS[1])
  for i = 1, #all, 2 do
    if string.sub(all[i], 1, 3) == 'in:' then
      inputs[#inputs + 1] = all[i]
      inputs[#inputs + 1] = all[i + 1]
    end
  end
end
local out = ''
if ARGV[2] == '1' and TERMINAL[f[1]] then out = redis.call('GET', KEYS[2]) or '' end
return {1, f, inputs, out}
`,
};
