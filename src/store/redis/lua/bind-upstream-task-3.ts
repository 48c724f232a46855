import type { LuaScript } from "../scripts.js";
import { transitionLua } from "./common.js";

/**
 * bind-upstream-task-3: the call runs as the upstream's own task: its id and session are
 * kept with the task (so another replica can follow it), and the task lives no longer than the
 * upstream keeps its own. The status stays; any non-terminal one (task-rules.ts
 * TRANSITION_RULES["bind-upstream-task"]).
 * KEYS: 1 task hash, 2 outcome, 3 lease
 * ARGV: 1 principal or '' (any); 2 lease token or '' (unfenced); 3 now (epoch ms); 4 hint channel;
 *       5 upstream task id; 6 upstream session or ''; 7 a shorter ttlMs or '' (a longer one
 *       changes nothing)
 * Returns: {1, fields, outcome} bound; {-1} not found (or another principal's);
 *          {-2, fields, outcome} stale lease; {-3, fields, outcome} wrong status (terminal)
 */
export const bindUpstreamTask: LuaScript = {
  name: "bindUpstreamTask",
  numberOfKeys: 3,
  lua: transitionLua(
    "bind-upstream-task",
    `redis.call('HSET', KEYS[1], 'upstreamTaskId', ARGV[5])
if ARGV[6] ~= '' then redis.call('HSET', KEYS[1], 'upstreamSession', ARGV[6]) end
shorten(ARGV[7])
return done()`,
  ),
};
