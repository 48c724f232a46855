import type { LuaScript } from "../scripts.js";
import { transitionLua } from "./common.js";

/**
 * bind-stream-3: the call's response stream carries event ids: where it can be resumed (the
 * upstream request id, an event id, the upstream session) is kept with the task, so another
 * replica can resume it (https://modelcontextprotocol.io/specification/2025-11-25/basic/transports,
 * Resumability and Redelivery). The status stays; any non-terminal one (task-rules.ts
 * TRANSITION_RULES["bind-stream"]).
 * KEYS: 1 task hash, 2 outcome, 3 lease
 * ARGV: 1 principal or '' (any); 2 lease token or '' (unfenced); 3 now (epoch ms); 4 hint channel;
 *       5 upstream request id (JSON); 6 event id; 7 upstream session or ''
 * Returns: {1, fields, outcome} bound; {-1} not found (or another principal's);
 *          {-2, fields, outcome} stale lease; {-3, fields, outcome} wrong status (terminal)
 */
export const bindStream: LuaScript = {
  name: "bindStream",
  numberOfKeys: 3,
  lua: transitionLua(
    "bind-stream",
    `redis.call('HSET', KEYS[1], 'upstreamRequestId', ARGV[5], 'lastEventId', ARGV[6])
if ARGV[7] ~= '' then redis.call('HSET', KEYS[1], 'upstreamSession', ARGV[7]) end
return done()`,
  ),
};
