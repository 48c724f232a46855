import { describe, expect, it } from "vitest";
import { StoreUnconfirmedError } from "../../src/store/contract.js";
import { aofSupport } from "../../src/store/redis/aof-confirm.js";
import { wireError } from "../../src/wire/errors.js";

const server = (version: string, extra = "") => `# Server\r\nredis_version:${version}\r\n${extra}redis_mode:standalone\r\n`;
const persistence = (aof: 0 | 1) => `# Persistence\r\nloading:0\r\naof_enabled:${aof}\r\naof_rewrite_in_progress:0\r\n`;

describe("which primaries WAITAOF is asked of (INFO server and persistence)", () => {
  it("asks it of Redis 7.2 and later with its AOF on", () => {
    expect(aofSupport(server("7.2.0"), persistence(1))).toEqual({ waitAof: true, reason: "redis_version 7.2.0, its AOF on" });
    expect(aofSupport(server("8.0.2"), persistence(1)).waitAof).toBe(true);
  });

  it("asks it of Valkey, which reports the redis_version it is compatible with", () => {
    expect(aofSupport(server("7.2.4", "server_name:valkey\r\nvalkey_version:8.1.1\r\n"), persistence(1)).waitAof).toBe(true);
  });

  it("does not ask it of Redis before 7.2, which has no WAITAOF", () => {
    expect(aofSupport(server("7.0.15"), persistence(1))).toEqual({ waitAof: false, reason: "redis_version 7.0.15 has no WAITAOF (7.2 and later)" });
    expect(aofSupport(server("6.2.14"), persistence(1)).waitAof).toBe(false);
  });

  it("does not ask it of a primary whose AOF is off, where numlocal 1 is an error", () => {
    expect(aofSupport(server("7.2.5"), persistence(0))).toEqual({ waitAof: false, reason: "redis_version 7.2.5, its AOF off (appendonly no)" });
  });

  it("does not ask it of a server that names no version", () => {
    expect(aofSupport("# Server\r\nredis_mode:standalone\r\n", persistence(1)).waitAof).toBe(false);
  });
});

describe("a write not confirmed", () => {
  it("tells the client which confirmation was missing: the replicas' (WAIT) or the primary's AOF fsync (WAITAOF)", () => {
    expect(wireError(new StoreUnconfirmedError(0, 2, 1000)).message).toBe(
      "the task store could not confirm the write: 0 of 2 replicas acknowledged the write within 1000 ms",
    );
    expect(wireError(new StoreUnconfirmedError(0, 1, 1000, "aof")).message).toBe(
      "the task store could not confirm the write: the replicas have the write, but the primary did not confirm within 1000 ms that it fsynced it to its AOF (WAITAOF)",
    );
  });
});
