import { z } from "zod";
import { UpstreamScopes } from "./oauth-schema.js";
import { AuthSchema, LimitsSchema } from "./security-schema.js";

/**
 * The one configuration schema. Parsed once at start (config/load.ts); everything else receives
 * the typed `Config`. Units are in the key names.
 */

const HostPort = z.string().regex(/^[^\s/:]+:\d+$/, "host:port");

const SentinelSchema = z
  .object({
    name: z.string().min(1).describe("The primary's name as the sentinels monitor it (`sentinel monitor <name> ...`)."),
    nodes: z.array(HostPort).min(1).describe("The sentinels, host:port each."),
    username: z.string().optional().describe("The Redis servers' ACL user, as in redisUrl."),
    password: z.string().optional().describe("The Redis servers' password, as in redisUrl; may name ${ENV_VARIABLES}."),
    sentinelUsername: z.string().optional().describe("The sentinels' own ACL user, when they have one."),
    sentinelPassword: z.string().optional().describe("The sentinels' own password (requirepass of sentinel.conf); may name ${ENV_VARIABLES}."),
    tls: z.boolean().default(false).describe("TLS to the sentinels and the servers, as rediss:// in redisUrl."),
  })
  .strict();

const TaskSupport = z.enum(["forbidden", "optional", "required"]);
/** What a tools/call from a caller that declared no task support gets. */
const UnawareClients = z.enum(["block", "handle"]);
/** When a tool the upstream marks `optional` runs as the upstream's own task. */
const NativeTasks = z.enum(["auto", "off"]);
const unawareOverride = (scope: string) => UnawareClients.optional().describe(`Overrides tasks.unawareClients for ${scope}.`);

const ToolPolicy = z
  .object({
    taskSupport: TaskSupport.optional().describe("Overrides tasks.defaultTaskSupport for this tool."),
    detachAfterMs: z.number().int().nonnegative().optional().describe("Overrides tasks.detachAfterMs for this tool."),
    maxDurationMs: z.number().int().positive().optional().describe("A detached call running longer fails."),
    retryOnOwnerLoss: z
      .boolean()
      .optional()
      .describe(
        "Run the call again on a live replica when its owner stops (needs tasks.maxAttempts > 1). Omitted: the upstream's readOnlyHint/idempotentHint annotations decide.",
      ),
    unawareClients: unawareOverride("this tool"),
    nativeTasks: NativeTasks.optional().describe("Overrides upstreams[].nativeTasks for this tool."),
    scopes: z
      .array(z.string().min(1))
      .default([])
      .describe("Scopes a token must hold to call this tool (auth modes oauth and jwt); checked before the call reaches the upstream."),
  })
  .strict();

/**
 * Deepest nesting taken from an upstream. Beyond some 4,000 levels JSON.stringify itself gives
 * up, so an outcome nested that deep could be read but never stored or answered.
 */
const upstreamJsonDepth = () =>
  z
    .number()
    .int()
    .min(8)
    .max(2000)
    .default(256)
    .describe(
      "Deepest nesting of objects and arrays taken in one message from the upstream; a deeper answer fails its call with an error naming this setting, a deeper notification or request is skipped.",
    );

const StdioUpstream = z
  .object({
    command: z.string().min(1).describe("Program to spawn (in its own process group)."),
    args: z.array(z.string()).default([]).describe("Its arguments, passed as given (no shell)."),
    env: z
      .record(z.string(), z.string())
      .default({})
      .describe("Variables set for the process, over anything inherited (docs/operations/security.md). Values are written as given, never expanded."),
    inheritEnv: z
      .union([z.literal("all"), z.array(z.string().regex(/^[^=\0]+$/, "a variable name"))])
      .default([])
      .describe(
        "Names of taskgate's environment variables the process also gets, beside HOME, LOGNAME, PATH, SHELL, TERM, USER, LANG, LC_ALL, LC_CTYPE, TZ and TMPDIR (on Windows the MCP SDK's list, TMP, PATHEXT, COMSPEC and TZ), which it always gets. `all`: the whole environment, as before this setting existed, warned about at start; TASKGATE_* variables still only when named in a list.",
      ),
    cwd: z.string().optional().describe("Working directory of the process; taskgate's own when omitted."),
    maxLineBytes: z
      .number()
      .int()
      .positive()
      .default(16 * 1024 * 1024)
      .describe(
        "Longest JSON-RPC line accepted from the upstream; a longer answer fails its call with an error naming this setting, and the line is skipped without being held.",
      ),
    maxJsonDepth: upstreamJsonDepth(),
    restartInitialDelayMs: z
      .number()
      .int()
      .nonnegative()
      .default(200)
      .describe("First delay before restarting a process that exited; doubles on each failure."),
    restartMaxDelayMs: z.number().int().positive().default(10_000).describe("Longest delay between restarts."),
    shutdownGraceMs: z.number().int().nonnegative().default(2_000).describe("Between closing stdin, SIGTERM and SIGKILL."),
  })
  .strict();

const HttpUpstream = z
  .object({
    url: z
      .url({ protocol: /^https?$/ })
      .describe(
        "The upstream's Streamable HTTP endpoint. A `user:password@` in it is sent as Basic credentials; it and every query value are masked wherever taskgate writes the URL (docs/operations/security.md).",
      ),
    headers: z
      .record(z.string(), z.string())
      .default({})
      .describe("Sent with every request upstream (credentials); values may be `${ENV_NAME}`. Never logged."),
    requestTimeoutMs: z
      .number()
      .int()
      .positive()
      .optional()
      .describe(
        "Longest wait for the answer to one request (tools/call and every other); past it that call alone fails, naming this setting, and the upstream is told to cancel; the upstream stays ready; also bounds initialize (30 s when omitted). Omitted: no limit of taskgate's own, whether the upstream answers one JSON body or an SSE stream, silent or not; a detached call's task TTL bounds it (docs/concepts/upstreams.md, Upstream timeouts).",
      ),
    connectTimeoutMs: z
      .number()
      .int()
      .positive()
      .default(10_000)
      .describe(
        "Longest wait for a TCP (and TLS) connection to the upstream. A connection that cannot be made marks the upstream unreachable; nothing else does.",
      ),
    maxMessageBytes: z
      .number()
      .int()
      .positive()
      .default(16 * 1024 * 1024)
      .describe("Largest JSON body or SSE event accepted from the upstream; a larger answer fails its call with an error naming this setting."),
    maxJsonDepth: upstreamJsonDepth(),
    forwardAuthorization: z
      .boolean()
      .default(false)
      .describe(
        "Send each client's own Authorization header (over a static one) with what taskgate sends for that client's calls, when the token's `aud` names this upstream's url (in every auth mode; docs/operations/security.md, Upstream credentials); taskgate's own requests carry only `headers`. HTTP only (refused under stdio). Never logged or stored.",
      ),
  })
  .strict();

const Upstream = z
  .object({
    name: z.string().min(1).default("default").describe("Names the upstream in logs, metrics and tasks; unique."),
    path: z.string().startsWith("/").default("/mcp").describe("Where clients reach it on the main listener; unique."),
    stdio: StdioUpstream.optional().describe("A child process speaking MCP over stdio (give this or http)."),
    http: HttpUpstream.optional().describe("A Streamable HTTP URL (give this or stdio)."),
    tools: z.record(z.string(), ToolPolicy).default({}).describe("Per-tool task policy and scopes, by tool name."),
    scopes: UpstreamScopes.describe("Scopes a token must hold (auth modes oauth and jwt): for every request, and per method."),
    generation: z
      .enum(["auto", "legacy", "modern"])
      .default("auto")
      .describe(
        "Which protocol generation to speak with the upstream. auto: an initialize session (2025-11-25 or older) when the upstream accepts one, else the stateless 2026-07-28 wire when it names that version or answers server/discover; a server that speaks both keeps the session; over HTTP the first request to an upstream not yet known is a 2026-07-28 server/discover (docs/concepts/upstreams.md). legacy: only the session. modern: only the 2026-07-28 wire.",
      ),
    isolation: z
      .enum(["pool", "shared", "per-call"])
      .default("pool")
      .describe(
        "pool: each tools/call, prompts/get and resources/read runs alone on a member of a pool of poolSize (stdio: a process; HTTP: an upstream session with its own GET stream), so whatever the upstream asks outside the call's own stream belongs to that call; a member is reused after a call that ended cleanly, replaced after a cancelled, timed-out or abandoned one; everything else stays on one home process or session. An HTTP upstream that keeps no sessions (no Mcp-Session-Id, or the 2026-07-28 wire) runs calls as shared does. shared: one process or session for everything (for servers that keep state per session); a question that cannot be tied to one call is refused. per-call: like pool, but a member is never reused.",
      ),
    poolSize: z
      .number()
      .int()
      .min(1)
      .max(1024)
      .optional()
      .describe(
        "isolation pool or per-call: most processes (stdio) or upstream sessions (HTTP) running calls at once, besides the home one; also the bulkhead (calls beyond it queue). Default 8 for stdio, 64 for HTTP.",
      ),
    shareQuietCalls: z
      .boolean()
      .default(true)
      .describe(
        "isolation: pool only. true: a tool whose calls ran alone 5 times in a row, each ended cleanly and asking nothing (however long it took), has its calls run together on one process of the pool (the quiet lane, bounded by maxInFlight), as shared would, at shared's cost, its calls still queued to run alone included; a question heard there is held until the lane's other calls end and tied to the one left (docs/operations/isolation.md). false: every call runs alone on a process, always.",
      ),
    perCallPool: z
      .number()
      .int()
      .min(0)
      .max(64)
      .default(2)
      .describe(
        "With isolation: per-call, how many initialized processes (stdio) are kept warm for the next calls (pool keeps one; an HTTP pool warms with its first call).",
      ),
    unawareClients: unawareOverride("this upstream's tools"),
    nativeTasks: NativeTasks.default("auto").describe(
      "An upstream that runs tools/call as tasks of its own (2025-11-25 `tasks.requests.tools.call`): a tool it marks `required` is always called as its task and bridged to the front (advertised as required). One it marks `optional`: auto: called as its task when the front call becomes a task (taskgate then follows the upstream's task instead of holding the call); off: never (taskgate runs it as a task of its own, as for any blocking server). Tools marked forbidden or not at all are never called as its tasks.",
    ),
    maxInFlight: z
      .number()
      .int()
      .min(1)
      .max(10_000)
      .default(64)
      .describe(
        "isolation: shared, the quiet lane of isolation: pool, and an HTTP upstream that keeps no sessions: most tools/call, prompts/get and resources/read in flight at once; calls beyond it queue (calls that run alone on a pool member use poolSize).",
      ),
    queueTimeoutMs: z
      .number()
      .int()
      .positive()
      .default(60_000)
      .describe(
        "How long a plain call (one a client waits on, holding a connection) may wait in the queue for a free slot before it fails with a clear error. A task waits until a tenth of its TTL (at most 10 s) is left instead.",
      ),
    roots: z
      .array(
        z
          .object({
            uri: z.string().startsWith("file://").describe("A root the upstream may work in, as a file:// URI."),
            name: z.string().optional().describe("A name for it that the upstream may show."),
          })
          .strict(),
      )
      .optional()
      .describe("The answer to a roots/list the upstream asks outside any client call (e.g. at start). Omitted: such a request gets an error."),
  })
  .strict()
  .refine((u) => (u.stdio === undefined) !== (u.http === undefined), {
    message: "give exactly one of stdio or http",
  });

const toolName = (name: string, what: string) =>
  z
    .string()
    .regex(/^[A-Za-z0-9_.-]{1,128}$/, "a tool name: letters, digits, _ . - (1 to 128)")
    .default(name)
    .describe(`Name of the gateway tool that ${what}.`);

export const ConfigSchema = z
  .object({
    listen: z
      .object({
        host: z
          .string()
          .min(1)
          .default("127.0.0.1")
          .describe("Address of the main listener (clients, /livez, /readyz, /metrics). 0.0.0.0 in the container image."),
        port: z.number().int().min(0).max(65535).default(8080).describe("Port of the main listener; 0 picks a free one."),
      })
      .strict()
      .prefault({}),
    http: z
      .object({
        maxBodyBytes: z
          .number()
          .int()
          .positive()
          .default(4 * 1024 * 1024)
          .describe("Largest request body accepted (413 beyond)."),
        maxJsonDepth: z
          .number()
          .int()
          .min(8)
          .max(1000)
          .default(64)
          .describe("Deepest nesting of objects and arrays in a request body; deeper is refused (400, -32600) before any other work."),
        allowedOrigins: z
          .array(z.string())
          .default([])
          .describe(
            'Origins of web pages allowed to call, answered with CORS headers; "*" allows all. Empty: on a loopback listener loopback pages (localhost, 127.0.0.1, [::1], any port), elsewhere none. Requests without Origin always pass.',
          ),
        sseKeepAliveMs: z
          .number()
          .int()
          .nonnegative()
          .default(15_000)
          .describe(
            "A keep-alive comment on open SSE streams this often, so idle proxies keep them; a plain call still running after this is answered on SSE (when the client accepts it) so it gets them too. 0: none.",
          ),
        sseMaxBufferedBytes: z
          .number()
          .int()
          .min(64 * 1024)
          .default(4 * 1024 * 1024)
          .describe(
            "What one SSE stream to a client may hold unsent (its reader fell behind); past it the stream is closed, never grown. What the client missed stays where it was: a task's outcome on tasks/result or tasks/get, a call's answer nowhere (it was a plain call). One message larger than this still goes out on a stream that holds nothing else.",
          ),
        allowedHosts: z
          .array(z.string())
          .default([])
          .describe(
            "Host header values accepted (DNS rebinding). Empty: when listening on loopback only localhost, 127.0.0.1 and [::1] (any port); otherwise any.",
          ),
      })
      .strict()
      .prefault({}),
    store: z
      .object({
        redisUrl: z.string().optional().describe("Omitted: the in-process store (tasks live in this process only)."),
        cluster: z
          .array(z.string().regex(/^(rediss?:\/\/)?[^\s/]+:\d+\/?$/, "host:port or redis://host:port"))
          .min(1)
          .optional()
          .describe("Redis Cluster seed nodes (host:port or redis://[user:pass@]host:port); instead of redisUrl."),
        sentinel: SentinelSchema.optional().describe(
          "Redis Sentinel: taskgate asks the sentinels where the primary is, and follows a failover; instead of redisUrl (docs/guides/replicas-redis.md, HA Redis).",
        ),
        keyPrefix: z
          .string()
          .default("taskgate:")
          .describe("Prefix of every Redis key and channel; several gateways may share one Redis with different prefixes. No braces."),
        waitForReplicas: z
          .union([z.literal("listed"), z.number().int().nonnegative()])
          .default("listed")
          .describe(
            "An acknowledged write (a task handle, an accepted answer or cancel, an outcome) is answered only once this many replicas have it (Redis WAIT). listed: every replica the topology lists (the shard's replicas in a Cluster, the sentinels' replicas, the primary's connected replicas); none listed waits for nothing. 0 trades that away: a failover may then lose what was acknowledged.",
          ),
        waitTimeoutMs: z
          .number()
          .int()
          .positive()
          .default(1000)
          .describe(
            "Longest an acknowledged write waits for its replicas, and as long again for the primary's AOF fsync (store.waitForAof); past it the caller gets -32603 'the task store could not confirm the write' (a new task is tried once more on another shard).",
          ),
        waitForAof: z
          .union([z.literal("auto"), z.boolean()])
          .default("auto")
          .describe(
            "After WAIT, an acknowledged write also waits for WAITAOF 1 0: the primary has fsynced it to its AOF. auto: on each primary whose INFO says Redis 7.2 or later (Valkey too) with appendonly yes; true: on every primary without asking its INFO; false: never, WAIT alone (the replicas hold the write in memory), which saves up to a second per write under appendfsync everysec. A primary that refuses WAITAOF is logged once and confirmed by WAIT alone until the next topology read.",
          ),
      })
      .strict()
      .prefault({}),
    sessions: z
      .object({
        idleTtlMs: z
          .number()
          .int()
          .positive()
          .default(24 * 3600 * 1000)
          .describe("A legacy-era session unused this long expires."),
        cacheMs: z
          .number()
          .int()
          .nonnegative()
          .default(1000)
          .describe(
            "How long a replica reuses a session record it read, instead of asking the store on every call (at most half of idleTtlMs). An ended session is dropped on every replica at once by a pub/sub hint; if that hint is lost, another replica may accept the ended session for up to this long. 0: read the store on every call.",
          ),
      })
      .strict()
      .prefault({}),
    tasks: z
      .object({
        detachAfterMs: z
          .number()
          .int()
          .nonnegative()
          .default(3000)
          .describe("A tools/call still running after this becomes a task (the tasks extension, policy optional)."),
        defaultTtlMs: z.number().int().positive().default(3_600_000).describe("A task's TTL, counted from creation, when the client asks for none."),
        maxTtlMs: z.number().int().positive().default(86_400_000).describe("A requested TTL is clamped to this."),
        pollIntervalMs: z.number().int().positive().default(1000).describe("The pollInterval suggested to clients."),
        defaultTaskSupport: TaskSupport.default("optional").describe("Task policy of tools without one in upstreams[].tools."),
        leaseMs: z
          .number()
          .int()
          .positive()
          .default(15_000)
          .describe(
            "A replica's lease in the store, one for all the calls it holds, renewed every third of it. A replica that cannot renew it for this long abandons its calls (a live replica's reaper ends them or runs them again) and refuses new tasks until it can.",
          ),
        cancelGraceMs: z
          .number()
          .int()
          .nonnegative()
          .default(3_000)
          .describe("After tasks/cancel, how long a result may still win before the call is abandoned."),
        inputTimeoutMs: z
          .number()
          .int()
          .positive()
          .optional()
          .describe(
            "How long an upstream question of a task waits for the client's answer; then the task fails with a message naming this setting. Never longer than the task's TTL (the default).",
          ),
        statusWriteIntervalMs: z.number().int().positive().default(250).describe("Upstream progress is written to statusMessage at most this often."),
        reaperIntervalMs: z
          .number()
          .int()
          .positive()
          .default(5_000)
          .describe("How often one replica looks for the tasks held under replica leases that lapsed (their owner stopped renewing)."),
        maxAttempts: z
          .number()
          .int()
          .min(1)
          .max(10)
          .default(1)
          .describe("Runs of one call at most. 1: a task whose owner stopped is failed; more: tools safe to repeat run again on a live replica."),
        drainMs: z
          .number()
          .int()
          .nonnegative()
          .default(25_000)
          .describe(
            "On SIGTERM/SIGINT, how long owned calls may still finish before they are failed (or released for a re-run). Keep it under the orchestrator's grace period (30 s by default).",
          ),
        mrtrTimeoutMs: z
          .number()
          .int()
          .positive()
          .default(300_000)
          .describe(
            "How long a call parked by an MRTR round (a question before it detached, 2026-07-28) waits for the client's retry; its requestState expires then and the upstream's question gets an error. Never longer than the task's TTL.",
          ),
        requestStateSecret: z
          .string()
          .min(32)
          .optional()
          .describe(
            "HMAC-SHA256 key signing MRTR requestState; every replica must share it. Omitted: a random key per process, so a retry reaching another replica is refused.",
          ),
        unawareClients: UnawareClients.default("block").describe(
          "A tools/call from a caller that declared no task support. block: it runs as a plain call (a required tool is refused). handle: past detachAfterMs (at once for a required tool) it detaches into a task and is answered with a CallToolResult naming the gateway tools that follow it.",
        ),
        gatewayTools: z
          .object({
            status: toolName("taskgate_status", "shows a task's progress and pending question"),
            result: toolName("taskgate_result", "gives a task's result once it is done"),
            cancel: toolName("taskgate_cancel", "cancels a task"),
            answer: toolName("taskgate_answer", "answers a task's pending question"),
          })
          .strict()
          .prefault({})
          .describe("Names of the tools added to tools/list for task-unaware callers in handle mode."),
      })
      .strict()
      .prefault({}),
    auth: AuthSchema,
    limits: LimitsSchema,
    memory: z
      .object({
        heapGrowthPercent: z
          .number()
          .int()
          .min(0)
          .max(400)
          .default(20)
          .describe(
            "How far V8 lets its old generation grow past what the last full collection kept before it collects again, in percent (V8's --heap-growing-percent). Held calls live long: under V8's own heuristic (0) a burst of creates grows the heap to several times its live data and keeps it (10,000 held calls: 332 MiB RSS, against 179 MiB at 20). Lower: less memory, more full collections.",
          ),
      })
      .strict()
      .prefault({}),
    log: z
      .object({
        level: z
          .enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"])
          .default("info")
          .describe("Least severe level written (on stderr); debug adds one line per request."),
        format: z
          .enum(["auto", "json", "pretty"])
          .default("auto")
          .describe(
            "How log lines are written on stderr. auto: one human line per event (time, level, message, the fields that matter) when stderr is a terminal, JSON lines otherwise; json or pretty: always that.",
          ),
      })
      .strict()
      .prefault({}),
    metrics: z
      .object({ enabled: z.boolean().default(true).describe("Serve Prometheus metrics at GET /metrics on the main listener.") })
      .strict()
      .prefault({}),
    tracing: z
      .object({
        otlpEndpoint: z
          .url({ protocol: /^https?$/ })
          .optional()
          .describe("OTLP/HTTP traces URL (e.g. http://collector:4318/v1/traces). Omitted: tracing is off (the OpenTelemetry API's no-op)."),
        serviceName: z.string().min(1).default("taskgate").describe("The service.name resource attribute of every span."),
        headers: z.record(z.string(), z.string()).default({}).describe("Extra headers sent with every OTLP export (e.g. a collector's API key)."),
      })
      .strict()
      .prefault({}),
    admin: z
      .object({
        port: z
          .number()
          .int()
          .min(0)
          .max(65535)
          .optional()
          .describe("Port of the admin listener (task list, cancel, status page). Omitted: no admin listener."),
        host: z.string().min(1).default("127.0.0.1").describe("Address of the admin listener; keep it private."),
        token: z
          .string()
          .min(16)
          .optional()
          .describe("Bearer token the admin listener requires (at least 16 characters; TASKGATE_ADMIN_TOKEN). Required when admin.port is set."),
        recentWindowMs: z
          .number()
          .int()
          .positive()
          .default(15 * 60_000)
          .describe(
            "How far back the status page lists ended tasks (completed, failed, cancelled) and counts them. Tasks are found only while they live (their TTL), and one refresh examines at most 2,000 of the newest: a longer window shows more only if they are still there.",
          ),
      })
      .strict()
      .prefault({}),
    upstreams: z.array(Upstream).min(1).describe("The MCP servers behind taskgate, each on its own path."),
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
    const where = (["redisUrl", "cluster", "sentinel"] as const).filter((k) => c.store[k] !== undefined);
    if (where.length > 1)
      ctx.addIssue({
        code: "custom",
        path: ["store", where[1]!],
        message: `give one of store.redisUrl, store.cluster and store.sentinel, not ${where.join(" and ")}`,
      });
    if (c.admin.port !== undefined && c.admin.token === undefined)
      ctx.addIssue({ code: "custom", path: ["admin", "token"], message: "is required when admin.port is set (or set TASKGATE_ADMIN_TOKEN)" });
    const toolNames = Object.values(c.tasks.gatewayTools);
    if (new Set(toolNames).size !== toolNames.length)
      ctx.addIssue({ code: "custom", path: ["tasks", "gatewayTools"], message: "the four gateway tools need four different names" });
    // Token passthrough (https://modelcontextprotocol.io/specification/2025-11-25/basic/security_best_practices#token-passthrough):
    // a token issued for taskgate's resource goes upstream only where the upstream is that resource too.
    if (c.auth.mode === "oauth")
      c.upstreams.forEach((u, i) => {
        if (u.http?.forwardAuthorization && !(c.auth.oauth.audience ?? []).includes(u.http.url))
          ctx.addIssue({
            code: "custom",
            path: ["upstreams", i, "http", "forwardAuthorization"],
            message:
              "would hand tokens issued for taskgate to another resource (token passthrough); give the upstream its own credentials in http.headers, or, if it is the same resource, list its URL in auth.oauth.audience",
          });
      });
    if (c.auth.mode !== "oauth" && c.auth.mode !== "jwt")
      c.upstreams.forEach((u, i) => {
        if (hasScopes(u))
          ctx.addIssue({ code: "custom", path: ["upstreams", i, "scopes"], message: "scopes need auth.mode oauth or jwt (only tokens carry scopes)" });
      });
    if (c.tasks.defaultTtlMs > c.tasks.maxTtlMs) ctx.addIssue({ code: "custom", path: ["tasks", "defaultTtlMs"], message: "must not exceed tasks.maxTtlMs" });
  });

function hasScopes(u: { scopes: { required: string[]; methods: Record<string, string[]> }; tools: Record<string, { scopes: string[] }> }): boolean {
  return u.scopes.required.length > 0 || Object.keys(u.scopes.methods).length > 0 || Object.values(u.tools).some((t) => t.scopes.length > 0);
}

export type Config = z.infer<typeof ConfigSchema>;
export type ConfigInput = z.input<typeof ConfigSchema>;
export type UpstreamConfig = Config["upstreams"][number];
export type StdioUpstreamConfig = NonNullable<UpstreamConfig["stdio"]>;
export type HttpUpstreamConfig = NonNullable<UpstreamConfig["http"]>;
export type TaskSupport = z.infer<typeof TaskSupport>;
export type UnawareClients = z.infer<typeof UnawareClients>;
export type NativeTasks = z.infer<typeof NativeTasks>;
