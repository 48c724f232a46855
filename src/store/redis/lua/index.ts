import type { LuaScript } from "../scripts.js";

/**
 * Every script the Redis store registers, one file each beside this one (`<name>-<key count>.ts`).
 * Sessions need none: GETEX, SET PX and DEL are each atomic already. Task state changes come next.
 */
export const allScripts: readonly LuaScript[] = [];
