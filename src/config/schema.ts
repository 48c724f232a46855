import { z } from "zod";

/**
 * The one configuration schema. Parsed once at start (config/load.ts); everything else receives
 * the typed `Config`. Units are in the key names.
 */

const TaskSupport = z.enum(["forbidden", "optional", "required"]);

const ToolPolicy = z
  .object({
    taskSupport: TaskSupport.optional().describe("Overrides tasks.defaultTaskSupport for this tool."),
    detachAfterMs: z.number().int().nonnegative().optional().describe("Overrides tasks.detachAfterMs for this tool."),
    maxDurationMs: z.number().int().positive().optional().describe("A detached call running longer fails."),
  })
  .strict();

const StdioUpstream = z
  .object({
    command: z.string().min(1).describe("Program to spawn (in its own process group)."),
    args: z.array(z.string()).default([]),
    env: z.record(z.string(), z.string()).default({}).describe("Added to taskgate's own environment."),
    cwd: z.string().optional(),
    maxLineBytes: z.number().int().positive().default(16 * 1024 * 1024).describe("Longest JSON-RPC line accepted from the upstream."),
    restartInitialDelayMs: z.number().int().nonnegative().default(200),
    restartMaxDelayMs: z.number().int().positive().default(10_000),
    shutdownGraceMs: z.number().int().nonnegative().default(2_000).describe("Between closing stdin, SIGTERM and SIGKILL."),
  })
  .strict();

const HttpUpstream = z
  .object({
    url: z.url({ protocol: /^https?$/ }),
    headers: z.record(z.string(), z.string()).default({}),
    requestTimeoutMs: z.number().int().positive().optional().describe("No limit when omitted: calls may be long."),
  })
  .strict();

const Upstream = z
  .object({
    name: z.string().min(1).default("default"),
    path: z.string().startsWith("/").default("/mcp"),
    stdio: StdioUpstream.optional(),
    http: HttpUpstream.optional(),
    tools: z.record(z.string(), ToolPolicy).default({}),
  })
  .strict()
  .refine((u) => (u.stdio === undefined) !== (u.http === undefined), {
    message: "give exactly one of stdio or http",
  });

export const ConfigSchema = z
  .object({
    listen: z
      .object({
        host: z.string().min(1).default("127.0.0.1"),
        port: z.number().int().min(0).max(65535).default(8080),
      })
      .strict()
      .prefault({}),
    http: z
      .object({
        maxBodyBytes: z.number().int().positive().default(4 * 1024 * 1024),
        allowedOrigins: z
          .array(z.string())
          .default([])
          .describe('Origins allowed to call (DNS-rebinding guard). Requests without Origin are allowed; "*" allows all.'),
        sseKeepAliveMs: z.number().int().positive().default(15_000),
      })
      .strict()
      .prefault({}),
    store: z
      .object({
        redisUrl: z.string().optional().describe("Omitted: the in-process store (tasks live in this process only)."),
        keyPrefix: z.string().default("taskgate:"),
      })
      .strict()
      .prefault({}),
    sessions: z
      .object({
        idleTtlMs: z.number().int().positive().default(24 * 3600 * 1000),
        cacheMs: z
          .number()
          .int()
          .nonnegative()
          .default(1000)
          .describe("How long a replica reuses a session record it read, instead of asking the store on every call (at most half of idleTtlMs). An ended session is dropped on every replica at once by a pub/sub hint; if that hint is lost, another replica may accept the ended session for up to this long. 0: read the store on every call."),
      })
      .strict()
      .prefault({}),
    tasks: z
      .object({
        detachAfterMs: z.number().int().nonnegative().default(3000),
        defaultTtlMs: z.number().int().positive().default(3_600_000),
        maxTtlMs: z.number().int().positive().default(86_400_000),
        pollIntervalMs: z.number().int().positive().default(1000),
        defaultTaskSupport: TaskSupport.default("optional"),
        leaseMs: z.number().int().positive().default(15_000).describe("An owner's lease on a detached call; renewed every third of it."),
        cancelGraceMs: z.number().int().nonnegative().default(3_000).describe("After tasks/cancel, how long a result may still win before the call is abandoned."),
        inputTimeoutMs: z.number().int().positive().optional().describe("How long an upstream question waits for tasks/update; never longer than the task's TTL (the default)."),
        statusWriteIntervalMs: z.number().int().positive().default(250).describe("Upstream progress is written to statusMessage at most this often."),
      })
      .strict()
      .prefault({}),
    log: z
      .object({ level: z.enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"]).default("info") })
      .strict()
      .prefault({}),
    upstreams: z.array(Upstream).min(1),
  })
  .strict()
  .superRefine((c, ctx) => {
    const paths = new Set<string>();
    const names = new Set<string>();
    c.upstreams.forEach((u, i) => {
      if (paths.has(u.path)) ctx.addIssue({ code: "custom", path: ["upstreams", i, "path"], message: `path ${u.path} is used twice` });
      if (names.has(u.name)) ctx.addIssue({ code: "custom", path: ["upstreams", i, "name"], message: `name ${u.name} is used twice` });
      paths.add(u.path);
      names.add(u.name);
    });
    if (c.tasks.defaultTtlMs > c.tasks.maxTtlMs)
      ctx.addIssue({ code: "custom", path: ["tasks", "defaultTtlMs"], message: "must not exceed tasks.maxTtlMs" });
  });

export type Config = z.infer<typeof ConfigSchema>;
export type ConfigInput = z.input<typeof ConfigSchema>;
export type UpstreamConfig = Config["upstreams"][number];
export type StdioUpstreamConfig = NonNullable<UpstreamConfig["stdio"]>;
export type HttpUpstreamConfig = NonNullable<UpstreamConfig["http"]>;
export type TaskSupport = z.infer<typeof TaskSupport>;
