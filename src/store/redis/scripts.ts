import type { RedisConnection } from "./connection.js";

/**
 * Lua scripts: one per state change, so each change is one atomic step that checks and writes
 * together. Sources live in TypeScript constants (the build is plain `tsc`, which copies no
 * `.lua` files).
 *
 * To add one:
 *   1. Create `lua/<name>-<number of keys>.ts` exporting a `LuaScript`. Start it with a comment
 *      listing KEYS, ARGV and the return codes. Declare every key it touches in KEYS (never build
 *      a key inside Lua): Redis Cluster routes by them, and keys.ts stays the one place names are
 *      made.
 *   2. Add it to `allScripts` in `lua/index.ts`.
 *   3. Call `scripts.run(script, keys, args)` from the store, and turn negative return codes
 *      into errors in one function beside it.
 *
 * Scripts are registered with `defineCommand`: EVALSHA, falling back to EVAL (which also loads
 * it) when the server does not know the script yet, e.g. after a restart or SCRIPT FLUSH.
 */
export interface LuaScript {
  /** Also the ioredis command name: letters and digits, camelCase. */
  readonly name: string;
  readonly numberOfKeys: number;
  readonly lua: string;
}

type ScriptCommand = (...keysThenArgs: (string | number)[]) => Promise<unknown>;

export class ScriptRunner {
  private readonly defined = new Set<string>();

  constructor(
    private readonly connection: RedisConnection,
    scripts: readonly LuaScript[],
  ) {
    for (const script of scripts) {
      if (!/^[A-Za-z][A-Za-z0-9]*$/.test(script.name)) throw new RangeError(`bad script name: ${script.name}`);
      if (this.defined.has(script.name)) throw new RangeError(`script defined twice: ${script.name}`);
      connection.client.defineCommand(script.name, { numberOfKeys: script.numberOfKeys, lua: script.lua });
      this.defined.add(script.name);
    }
  }

  /** Rejects with StoreUnavailableError when Redis does not answer; a script error keeps its message. */
  async run(script: LuaScript, keys: readonly string[], args: readonly (string | number)[]): Promise<unknown> {
    if (!this.defined.has(script.name)) throw new Error(`script not registered: ${script.name}`);
    if (keys.length !== script.numberOfKeys) {
      throw new RangeError(`${script.name} takes ${script.numberOfKeys} keys, got ${keys.length}`);
    }
    return this.connection.call((client) => {
      const command = (client as unknown as Record<string, ScriptCommand>)[script.name];
      if (!command) throw new Error(`script not defined on this connection: ${script.name}`);
      return command.call(client, ...keys, ...args);
    });
  }
}
