import { Redis } from "ioredis";
import { startProcess, type Tracked } from "./procs.js";
import { freePort, waitFor } from "./wait.js";

/** A throwaway redis-server for this run: loopback, a free port, nothing written to disk. */
export interface BenchRedis {
  url: string;
  proc: Tracked;
  client: Redis;
  /** `INFO <section>` as name → value. */
  info(section: string): Promise<Map<string, string>>;
  /** Calls per command from `INFO commandstats`, e.g. "evalsha" → 1200. */
  commandCalls(): Promise<Map<string, number>>;
  close(): Promise<void>;
}

/** `args`: more for redis-server, e.g. `--replicaof` (scenario w). */
export async function startRedis(args: string[] = []): Promise<BenchRedis> {
  const port = await freePort();
  const proc = startProcess("redis-server", "redis-server", ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", ...args]);
  // Retries quickly while the server is still starting; errors until then are expected.
  const client = new Redis({ host: "127.0.0.1", port, retryStrategy: () => 50, maxRetriesPerRequest: 1 });
  client.on("error", () => undefined);
  await waitFor(
    () =>
      client.ping().then(
        (r) => r === "PONG",
        () => false,
      ),
    "redis-server to answer",
  );
  const info = async (section: string) => parseInfo(await client.info(section));
  return {
    url: `redis://127.0.0.1:${port}/0`,
    proc,
    client,
    info,
    commandCalls: async () => commandCalls(await info("commandstats")),
    close: async () => {
      client.disconnect();
      await proc.stop();
    },
  };
}

export function parseInfo(text: string): Map<string, string> {
  const fields = new Map<string, string>();
  for (const line of text.split(/\r?\n/)) {
    const at = line.indexOf(":");
    if (at > 0 && !line.startsWith("#")) fields.set(line.slice(0, at), line.slice(at + 1));
  }
  return fields;
}

function commandCalls(stats: Map<string, string>): Map<string, number> {
  const calls = new Map<string, number>();
  for (const [key, value] of stats) {
    const match = /calls=(\d+)/.exec(value);
    if (key.startsWith("cmdstat_") && match) calls.set(key.slice("cmdstat_".length), Number(match[1]));
  }
  return calls;
}

/**
 * What Redis did between two snapshots, leaving out the bench's own INFO calls (they are not
 * taskgate's). `calls` per command, and their total.
 */
export function commandDelta(before: Map<string, number>, after: Map<string, number>): { total: number; calls: Record<string, number> } {
  const calls: Record<string, number> = {};
  let total = 0;
  for (const [name, count] of after) {
    const delta = count - (before.get(name) ?? 0);
    if (delta <= 0 || name === "info") continue;
    calls[name] = delta;
    total += delta;
  }
  return { total, calls };
}
