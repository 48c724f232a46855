import type { LuaScript } from "../scripts.js";
import { transitionLua } from "./common.js";

/**
 * queue-task-3: the call waits in its owner's queue for a slot on the upstream. What it would
 * send (the tools/call params) is kept with the task and the task marked queued, so a live
 * replica queues it again if the owner stops: nothing of it ran. The status stays; any
 * non-terminal one (task-rules.ts TRANSITION_RULES.queue).
 * KEYS: 1 task hash, 2 outcome, 3 lease
 * ARGV: 1 principal or '' (any); 2 lease token or '' (unfenced); 3 now (epoch ms); 4 hint channel;
 *       5 the params (JSON)
 * Returns: {1, fields, outcome} queued; {-1} not found (or another principal's);
 *          {-2, fields, outcome} stale lease; {-3, fields, outcome} wrong status (terminal)
 */
export const queueTask: LuaScript = {
  name: "queueTask",
  numberOfKeys: 3,
  lua: transitionLua(
    "queue",
    `redis.call('HSET', KEYS[1], 'queued', '1', 'requestParams', ARGV[5])
return done()`,
  ),
};

/**
 * start-queued-3: the queued call leaves the queue to run, written before anything is sent
 * upstream: from now on a stopped owner's call is a started one. The params go unless re-runs
 * keep them. The status stays; any non-terminal one (task-rules.ts TRANSITION_RULES["start-queued"]).
 * KEYS: 1 task hash, 2 outcome, 3 lease
 * ARGV: 1 principal or '' (any); 2 lease token or '' (unfenced); 3 now (epoch ms); 4 hint channel;
 *       5 '1' to keep the params, else ''
 * Returns: {1, fields, outcome} started; {-1} not found (or another principal's);
 *          {-2, fields, outcome} stale lease; {-3, fields, outcome} wrong status (terminal)
 */
export const startQueued: LuaScript = {
  name: "startQueued",
  numberOfKeys: 3,
  lua: transitionLua(
    "start-queued",
    `redis.call('HDEL', KEYS[1], 'queued')
if ARGV[5] ~= '1' then redis.call('HDEL', KEYS[1], 'requestParams') end
return done()`,
  ),
};
