import type { LuaScript } from "../scripts.js";

/**
 * record-format-1: the store's format (store/format.ts): written when there is none, raised when
 * the claim is newer and works beside the recorded format, else kept. Answers what is recorded after.
 * KEYS: 1 the format (hash: format, oldest, version)
 * ARGV: 1 format; 2 oldest format the claim works beside; 3 taskgate version
 * Returns: { format, oldest, version }
 */
export const recordFormat: LuaScript = {
  name: "recordFormat",
  numberOfKeys: 1,
  lua: `
local cur = redis.call('HMGET', KEYS[1], 'format', 'oldest', 'version')
local format = tonumber(cur[1])
if format == nil or (format < tonumber(ARGV[1]) and format >= tonumber(ARGV[2])) then
  redis.call('HSET', KEYS[1], 'format', ARGV[1], 'oldest', ARGV[2], 'version', ARGV[3])
  return { ARGV[1], ARGV[2], ARGV[3] }
end
return { cur[1], cur[2] or cur[1], cur[3] or 'unknown' }
`,
};
