import { createHash } from "node:crypto";
import { TASKS_EXTENSION } from "../modern/envelope.js";
import { TextKeyedCache } from "../../util/text-keyed-cache.js";
import type { PooledProcess } from "./pool-caller.js";
import type { QuietLane } from "./quiet-lane.js";
import type { SharedBound, UpstreamPool } from "./upstream-pool.js";

/** The client capabilities an upstream may act on (https://modelcontextprotocol.io/specification/2025-11-25/basic/lifecycle#capability-negotiation). */
const DECLARED = ["elicitation", "sampling", "roots", "extensions"] as const;

/**
 * What a caller declared that its upstream session declares in turn: elicitation, sampling, roots
 * (with `listChanged`) and `extensions` (MCP Apps' `io.modelcontextprotocol/ui` among them), as
 * the caller wrote them. Not the tasks extension: taskgate offers it to the caller itself, and
 * what the upstream hears of tasks follows the upstream's own support. Undefined: taskgate's own
 * capabilities (the home session's). `configuredRoots`:
 * upstreams[].roots is set, so taskgate answers a roots/list itself where the caller declared no roots.
 */
export interface CallerProfile {
  readonly key: string;
  /** Not to be changed: it may be shared by many calls. */
  readonly capabilities: Record<string, unknown> | undefined;
}

export function callerProfile(capabilities: Record<string, unknown> | undefined, configuredRoots = false): CallerProfile {
  if (capabilities === undefined) return { key: "taskgate", capabilities: undefined };
  const declared = declaredOf(capabilities, configuredRoots);
  return { key: keyOf(declared), capabilities: declared };
}

function declaredOf(capabilities: Record<string, unknown>, configuredRoots: boolean): Record<string, unknown> {
  const declared: Record<string, unknown> = configuredRoots ? { roots: {} } : {};
  for (const name of DECLARED) {
    const value = capabilities[name];
    if (value === undefined || value === null) continue;
    if (name === "extensions" && isObject(value)) {
      const { [TASKS_EXTENSION]: _tasks, ...others } = value;
      if (Object.keys(others).length > 0) declared.extensions = others;
    } else declared[name] = value;
  }
  return declared;
}

/** Keys of the profiles seen lately, by what was declared as the caller wrote it. */
const KEYS = new TextKeyedCache<string>(1_000, 2_048);

/** A fixed-size key, however much a caller declared; only a text not seen lately is sorted and hashed. */
function keyOf(declared: Record<string, unknown>): string {
  return KEYS.get(JSON.stringify(declared), () => createHash("sha256").update(canonical(declared)).digest("base64url"));
}

/**
 * Whether a caller's lists go to a member of its profile rather than the home session: it declared
 * an extension (MCP Apps' `io.modelcontextprotocol/ui`), by which a server may list other tools.
 * Other callers keep the home session's one view, which a server that keeps state per session
 * (resources it adds over time) shows alike to all of them.
 */
export function listsByProfile(capabilities: Record<string, unknown>): boolean {
  return declaredOf(capabilities, false).extensions !== undefined;
}

/** One caller profile's members: its pool, and its quiet lane where calls share one. */
export interface Profile {
  readonly key: string;
  readonly pool: UpstreamPool<PooledProcess>;
  readonly lane: QuietLane | undefined;
  /** When a call last took it (performance.now()): the least recently used give way first. */
  usedAt: number;
}

export class ProfileLimitError extends Error {
  constructor(upstream: string, profiles: number) {
    super(
      `upstream '${upstream}' serves callers of ${profiles} different capability profiles at once, each on members of its own (upstreams[].poolSize bounds them); this call's profile gets a member once a call of another profile ends`,
    );
    this.name = "ProfileLimitError";
  }
}

/**
 * The pool of one upstream (`isolation: pool` and `per-call`) split by caller profile, all within `poolSize`.
 * How profiles share it: docs/contributing/architecture.md#caller-profiles; costs: docs/operations/isolation.md#caller-capabilities
 */
export class ProfilePools {
  private readonly profiles = new Map<string, Profile>();
  readonly first: Profile;
  private next = 0;
  readonly bound: SharedBound;
  /**
   * What each capabilities object declared, by the object: a legacy session's comes with each of
   * its calls, and the 2026-07-28 wire's are one object per text declared (validateModernRequest).
   */
  private readonly seen = new WeakMap<Record<string, unknown>, CallerProfile>();

  constructor(
    private readonly upstream: string,
    private readonly size: number,
    private readonly make: (capabilities: Record<string, unknown> | undefined, bound: SharedBound, first: boolean) => Omit<Profile, "key" | "usedAt">,
    /** upstreams[].roots is set: every profile declares roots, which taskgate answers where its caller cannot. */
    private readonly configuredRoots = false,
  ) {
    this.bound = {
      nextId: () => ++this.next,
      room: () => this.members() < this.size,
      makeRoom: () => this.members() < this.size || (this.giveWay() && this.members() < this.size),
    };
    this.first = this.add(callerProfile({}, configuredRoots), true);
  }

  /** The profile of a caller with these capabilities, made on first use. */
  of(capabilities: Record<string, unknown>): Profile {
    const { key, capabilities: declared } = this.declared(capabilities);
    const known = this.profiles.get(key);
    const profile = known ?? this.add({ key, capabilities: declared });
    profile.usedAt = performance.now();
    return profile;
  }

  private declared(capabilities: Record<string, unknown>): CallerProfile {
    const known = this.seen.get(capabilities);
    if (known) return known;
    const made = callerProfile(capabilities, this.configuredRoots);
    this.seen.set(capabilities, made);
    return made;
  }

  /**
   * The pool a call took before it waited its turn, or, when its profile was forgotten meanwhile
   * (all its members gone, its pool closed), the pool of the caller's profile as it is now.
   */
  currentPool(taken: UpstreamPool<PooledProcess>, capabilities: Record<string, unknown>): UpstreamPool<PooledProcess> {
    for (const profile of this.profiles.values()) if (profile.pool === taken) return taken;
    return this.of(capabilities).pool;
  }

  /** The same for a quiet lane. */
  currentLane(taken: QuietLane, capabilities: Record<string, unknown>): QuietLane {
    for (const profile of this.profiles.values()) if (profile.lane === taken) return taken;
    return this.of(capabilities).lane ?? taken;
  }

  all(): IterableIterator<Profile> {
    return this.profiles.values();
  }

  /** Members of every profile, but those being ended. */
  members(): number {
    let total = 0;
    for (const profile of this.profiles.values()) total += profile.pool.members;
    return total;
  }

  private add({ key, capabilities }: { key: string; capabilities: Record<string, unknown> | undefined }, first = false): Profile {
    // A profile is worth keeping while it has members; at most poolSize + 1 are kept.
    if (this.profiles.size > this.size) this.forgetEmpty();
    // Idle members of the least recently used profiles give way, so that a profile of idle members only is forgotten.
    while (this.profiles.size > this.size && this.giveWay()) this.forgetEmpty();
    if (this.profiles.size > this.size) throw new ProfileLimitError(this.upstream, this.profiles.size);
    const profile: Profile = { key, usedAt: performance.now(), ...this.make(capabilities, this.bound, first) };
    this.profiles.set(key, profile);
    return profile;
  }

  /** An idle member of the least recently used profile that has one is ended: true when one was. */
  private giveWay(): boolean {
    const byAge = [...this.profiles.values()].filter((p) => p.pool.hasIdle).sort((a, b) => a.usedAt - b.usedAt);
    for (const profile of byAge) if (profile.pool.coolDown()) return true;
    return false;
  }

  /** Profiles without members (but the first) are forgotten; their pools are closed. */
  private forgetEmpty(): void {
    for (const profile of [...this.profiles.values()]) {
      if (profile === this.first || profile.pool.members > 0) continue;
      this.profiles.delete(profile.key);
      void profile.pool.close();
    }
  }
}

/** JSON with object keys sorted, so that two callers who declared the same get the same key. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(",")}]`;
  if (isObject(value))
    return `{${Object.keys(value)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonical(value[k])}`)
      .join(",")}}`;
  return JSON.stringify(value) ?? "null";
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
