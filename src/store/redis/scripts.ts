import { StoreUnavailableError } from "../contract.js";
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
 *   3. Call `scripts.run(script, keys, args)` (or `runEach` for a batch) from the store, and
 *      read its return code in the one function that knows the codes (task-replies.ts).
 * A task transition is named: its rule (the statuses it starts from) goes in
 * TRANSITION_RULES (../task-rules.ts), its kind in TaskChange, its script is built with
 * `transitionLua` (lua/common.ts, which checks the rule inside Lua) and listed in lua/transitions.ts,
 * its ARGV in task-changes.ts, and it gets a case in test/contract/redis-transition-scripts.test.ts.
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
    this.check(script, [{ keys, args }]);
    return this.connection.command((client) => commandOf(client, script).call(client, ...keys, ...args));
  }

  /**
   * The same script once per call, all in one pipeline: one write, one round trip however many.
   * A NOSCRIPT reply (after a restart or SCRIPT FLUSH) is resent as EVAL by ioredis, per command,
   * so the pipeline still settles with every reply. The first failed call rejects the whole batch.
   */
  async runEach(script: LuaScript, calls: readonly ScriptCall[]): Promise<unknown[]> {
    this.check(script, calls);
    if (calls.length === 0) return [];
    // In a cluster the calls go out one by one and auto-pipelining batches them per node.
    if (this.connection.isCluster) return Promise.all(calls.map(({ keys, args }) => this.run(script, keys, args)));
    return this.connection.call(async (client) => {
      const pipeline = client.pipeline();
      const command = commandOf(pipeline, script);
      for (const { keys, args } of calls) void command.call(pipeline, ...keys, ...args);
      const replies = (await pipeline.exec()) ?? [];
      return replies.map(([err, reply]) => {
        if (err) throw err;
        return reply;
      });
    });
  }

  /**
   * Calls of several scripts, in one pipeline (in a cluster each goes out alone and
   * auto-pipelining batches them per node). Each reply, or its error, comes back in order: one
   * failed call fails only itself.
   */
  async runBatch(calls: ReadonlyArray<ScriptCall & { script: LuaScript }>): Promise<unknown[]> {
    for (const call of calls) this.check(call.script, [call]);
    if (calls.length === 0) return [];
    if (this.connection.isCluster)
      return Promise.all(
        calls.map(({ script, keys, args }) =>
          // The store away fails the batch, as one pipeline would; a script's own error fails its call.
          this.run(script, keys, args).catch((err: unknown) => (err instanceof StoreUnavailableError ? Promise.reject(err) : toError(err))),
        ),
      );
    return this.connection.call(async (client) => {
      const pipeline = client.pipeline();
      for (const { script, keys, args } of calls) void commandOf(pipeline, script).call(pipeline, ...keys, ...args);
      const replies = (await pipeline.exec()) ?? [];
      return replies.map(([err, reply]) => err ?? reply);
    });
  }

  private check(script: LuaScript, calls: readonly ScriptCall[]): void {
    if (!this.defined.has(script.name)) throw new Error(`script not registered: ${script.name}`);
    for (const { keys } of calls) {
      if (keys.length !== script.numberOfKeys) {
        throw new RangeError(`${script.name} takes ${script.numberOfKeys} keys, got ${keys.length}`);
      }
    }
  }
}

export interface ScriptCall {
  keys: readonly string[];
  args: readonly (string | number)[];
}

/** The command defineCommand added, on a client or on one of its pipelines. */
function commandOf(target: object, script: LuaScript): ScriptCommand {
  const command = (target as Record<string, ScriptCommand | undefined>)[script.name];
  if (!command) throw new Error(`script not defined on this connection: ${script.name}`);
  return command;
}

function toError(err: unknown): Error {
  return err instanceof Error ? err : new Error(String(err));
}
