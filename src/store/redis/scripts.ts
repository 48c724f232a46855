import { createHash } from "node:crypto";
import type { ChainableCommander, Redis } from "ioredis";
import { StoreUnavailableError } from "../contract.js";
import type { RedisConnection } from "./connection.js";
import { toStoreError } from "./errors.js";

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
 * Scripts are sent as EVALSHA, falling back to EVAL (which also loads it) when the server does not
 * know the script yet, e.g. after a restart or SCRIPT FLUSH. Not ioredis's `defineCommand`: every
 * pipeline ioredis makes (one per event-loop turn with auto-pipelining, so about one per poll)
 * copies each defined command onto itself, which cost a poll more than its own script call.
 */
export interface LuaScript {
  /** The name errors give it: letters and digits, camelCase. */
  readonly name: string;
  readonly numberOfKeys: number;
  readonly lua: string;
}

/** A script as sent: its SHA-1 for EVALSHA, its source for the EVAL that loads it. */
interface Loaded {
  readonly sha: string;
  readonly lua: string;
  readonly numberOfKeys: number;
}

type Target = Pick<Redis, "evalsha" | "eval">;

export class ScriptRunner {
  private readonly defined = new Map<string, Loaded>();
  /**
   * Scripts sent since the connection was last (re)made: the first call of each goes as EVAL,
   * which loads it, so a fresh connection pays no NOSCRIPT round trip; later calls as EVALSHA.
   */
  private readonly sent = new Set<string>();

  constructor(
    private readonly connection: RedisConnection,
    scripts: readonly LuaScript[],
  ) {
    for (const script of scripts) {
      if (!/^[A-Za-z][A-Za-z0-9]*$/.test(script.name)) throw new RangeError(`bad script name: ${script.name}`);
      if (this.defined.has(script.name)) throw new RangeError(`script defined twice: ${script.name}`);
      this.defined.set(script.name, { sha: createHash("sha1").update(script.lua).digest("hex"), lua: script.lua, numberOfKeys: script.numberOfKeys });
    }
    connection.client.on("ready", () => this.sent.clear());
  }

  /** Rejects with StoreUnavailableError when Redis does not answer; a script error keeps its message. */
  run(script: LuaScript, keys: readonly string[], args: readonly (string | number)[]): Promise<unknown> {
    let loaded: Loaded;
    try {
      loaded = this.check(script, [{ keys, args }]);
    } catch (err) {
      return Promise.reject(err);
    }
    return this.connection.command((client) =>
      this.firstSend(script) ? client.eval(loaded.lua, loaded.numberOfKeys, ...keys, ...args) : evalScript(client as Target, loaded, keys, args),
    );
  }

  /**
   * The same script once per call, all in one pipeline: one write, one round trip however many
   * (`runBatch`). The first failed call rejects the whole batch.
   */
  async runEach(script: LuaScript, calls: readonly ScriptCall[]): Promise<unknown[]> {
    const replies = await this.runBatch(calls.map((call) => ({ ...call, script })));
    const failed = replies.find((reply) => reply instanceof Error);
    if (failed) throw failed;
    return replies;
  }

  /**
   * Calls of several scripts, in one pipeline (in a cluster each goes out alone and
   * auto-pipelining batches them per node). A NOSCRIPT reply (after a restart or SCRIPT FLUSH) is
   * sent again as EVAL, per call, so the batch still settles with every reply. Each reply, or its
   * error, comes back in order: one failed call fails only itself; the store not answering fails
   * the batch.
   */
  async runBatch(calls: ReadonlyArray<ScriptCall & { script: LuaScript }>): Promise<unknown[]> {
    const loaded = calls.map((call) => this.check(call.script, [call]));
    if (calls.length === 0) return [];
    if (this.connection.isCluster) return Promise.all(calls.map(({ script, keys, args }) => this.run(script, keys, args).catch(replyError)));
    return this.connection.call(async (client) => {
      const pipeline = client.pipeline();
      calls.forEach(({ script, keys, args }, i) => {
        const { lua, sha, numberOfKeys } = loaded[i]!;
        if (this.firstSend(script)) void pipeline.eval(lua, numberOfKeys, ...keys, ...args);
        else void pipeline.evalsha(sha, numberOfKeys, ...keys, ...args);
      });
      const replies = (await pipeline.exec()) ?? [];
      return Promise.all(
        replies.map(([err, reply], i) => {
          if (!err) return reply;
          if (!isNoScript(err)) return replyError(err);
          const { keys, args } = calls[i]!;
          const { lua, numberOfKeys } = loaded[i]!;
          return client.eval(lua, numberOfKeys, ...keys, ...args).catch(replyError);
        }),
      );
    });
  }

  /** Adds a call to `pipeline`: EVALSHA, or EVAL where the server may not know the script yet (`load`). */
  append(pipeline: ChainableCommander, { script, keys, args }: ScriptCall & { script: LuaScript }, load = false): void {
    const { lua, sha, numberOfKeys } = this.check(script, [{ keys, args }]);
    if (this.firstSend(script) || load) void pipeline.eval(lua, numberOfKeys, ...keys, ...args);
    else void pipeline.evalsha(sha, numberOfKeys, ...keys, ...args);
  }

  private firstSend(script: LuaScript): boolean {
    if (this.sent.has(script.name)) return false;
    this.sent.add(script.name);
    return true;
  }

  private check(script: LuaScript, calls: readonly ScriptCall[]): Loaded {
    const loaded = this.defined.get(script.name);
    if (!loaded) throw new Error(`script not registered: ${script.name}`);
    for (const { keys } of calls) {
      if (keys.length !== script.numberOfKeys) {
        throw new RangeError(`${script.name} takes ${script.numberOfKeys} keys, got ${keys.length}`);
      }
    }
    return loaded;
  }
}

/** EVALSHA; EVAL (which loads the script again) if the server does not know it. */
function evalScript(client: Target, script: Loaded, keys: readonly string[], args: readonly (string | number)[]): Promise<unknown> {
  return client.evalsha(script.sha, script.numberOfKeys, ...keys, ...args).catch((err: unknown) => {
    if (!isNoScript(err)) throw err;
    return client.eval(script.lua, script.numberOfKeys, ...keys, ...args);
  });
}

export function isNoScript(err: unknown): boolean {
  return err instanceof Error && err.message.includes("NOSCRIPT");
}

export interface ScriptCall {
  keys: readonly string[];
  args: readonly (string | number)[];
}

/**
 * One call's failure in a batch: a reply error is that call's own; anything else (a command the
 * dropped connection never answered: MaxRetriesPerRequestError, "Connection is closed") means
 * the store did not answer, which fails the batch as it fails a command sent alone.
 */
function replyError(err: unknown): Error {
  const mapped = toStoreError(err);
  if (mapped instanceof StoreUnavailableError) throw mapped;
  return mapped;
}
