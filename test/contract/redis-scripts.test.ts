import { afterEach, beforeEach, expect, it } from "vitest";
import { StoreUnavailableError } from "../../src/store/contract.js";
import { RedisConnection } from "../../src/store/redis/connection.js";
import { ScriptRunner, type LuaScript } from "../../src/store/redis/scripts.js";
import { redisUrl, uniquePrefix } from "../helpers/redis.js";

/**
 * KEYS[1] the key to set; ARGV[1] its value.
 * Returns 1 when it set the key, -1 when the value was empty.
 */
const setNonEmpty: LuaScript = {
  name: "setNonEmpty",
  numberOfKeys: 1,
  lua: `if ARGV[1] == "" then return -1 end
redis.call("SET", KEYS[1], ARGV[1])
return 1`,
};
const broken: LuaScript = { name: "broken", numberOfKeys: 0, lua: `return redis.call("NOSUCHCOMMAND")` };

let connection: RedisConnection;
let scripts: ScriptRunner;
beforeEach(() => {
  connection = new RedisConnection({ target: { url: redisUrl() }, name: "scripts-test", callTimeoutMs: 1_000 });
  scripts = new ScriptRunner(connection, [setNonEmpty, broken]);
});
afterEach(async () => {
  await connection.close();
});

it("runs a registered script, also after the server forgot it", async () => {
  const key = `${uniquePrefix()}{x}`;
  expect(await scripts.run(setNonEmpty, [key], ["v1"])).toBe(1);
  await connection.call((c) => c.script("FLUSH"));
  expect(await scripts.run(setNonEmpty, [key], [""])).toBe(-1);
  expect(await connection.call((c) => c.get(key))).toBe("v1");
  await connection.call((c) => c.del(key));
});

it("refuses a call whose key count differs from the script's", async () => {
  await expect(scripts.run(setNonEmpty, [], ["v"])).rejects.toBeInstanceOf(RangeError);
});

it("refuses a script it was not given", async () => {
  const other: LuaScript = { name: "other", numberOfKeys: 0, lua: "return 1" };
  await expect(scripts.run(other, [], [])).rejects.toThrow(/not registered/);
});

it("reports a script error as itself, not as an unavailable store", async () => {
  const failure = scripts.run(broken, [], []);
  await expect(failure).rejects.not.toBeInstanceOf(StoreUnavailableError);
  await expect(failure).rejects.toThrow(/NOSUCHCOMMAND|Unknown Redis command/i);
});
