import { stringify } from "yaml";
import { z } from "zod";
import { ENV_NAMES } from "./env.js";
import { ConfigSchema } from "./schema.js";

/** The slice of JSON Schema that z.toJSONSchema produces for the config. */
interface Node {
  type?: string;
  properties?: Record<string, Node>;
  required?: string[];
  items?: Node;
  additionalProperties?: Node | boolean;
  default?: unknown;
  description?: string;
  enum?: unknown[];
  const?: unknown;
  anyOf?: Node[];
}

export interface ReferenceRow {
  key: string;
  type: string;
  default: string;
  env?: string;
  description?: string;
}

/** Which setting each TASKGATE_* variable overrides (the type makes a new variable need a line here). */
const ENV_PATHS: Record<Exclude<keyof typeof ENV_NAMES, "configFile">, string> = {
  host: "listen.host",
  port: "listen.port",
  redisUrl: "store.redisUrl",
  redisCluster: "store.cluster",
  redisSentinel: "store.sentinel",
  logLevel: "log.level",
  logFormat: "log.format",
  upstream: "upstreams",
  adminToken: "admin.token",
};
const ENV_BY_PATH = new Map(Object.entries(ENV_PATHS).map(([k, path]) => [path, ENV_NAMES[k as keyof typeof ENV_PATHS]]));

/** Every setting of the zod schema, in schema order: the configuration reference is made from this. */
export function configRows(): ReferenceRow[] {
  const root = z.toJSONSchema(ConfigSchema, { io: "input", unrepresentable: "any" }) as Node;
  return walk(root, "", true);
}

function walk(node: Node, path: string, required: boolean): ReferenceRow[] {
  const rows: ReferenceRow[] = [];
  const described = path !== "" && (node.description !== undefined || !isSection(node));
  if (described) rows.push(row(node, path, required));
  if (node.properties)
    for (const [key, child] of Object.entries(node.properties)) rows.push(...walk(child, path ? `${path}.${key}` : key, node.required?.includes(key) ?? false));
  if (node.items?.properties) rows.push(...walk(node.items, `${path}[]`, true).filter((r) => r.key !== `${path}[]`));
  const values = typeof node.additionalProperties === "object" ? node.additionalProperties : undefined;
  if (values?.properties) rows.push(...walk(values, `${path}.<name>`, true).filter((r) => r.key !== `${path}.<name>`));
  return rows;
}

/** An object whose own row would say nothing: its keys have rows of their own. */
function isSection(node: Node): boolean {
  return node.type === "object" && node.properties !== undefined;
}

function row(node: Node, key: string, required: boolean): ReferenceRow {
  const fallback = required ? "required" : "—";
  const env = ENV_BY_PATH.get(key);
  return {
    key,
    type: typeOf(node),
    default: node.default === undefined || isSection(node) ? fallback : `\`${JSON.stringify(node.default)}\``,
    ...(env ? { env } : {}),
    ...(node.description ? { description: node.description } : {}),
  };
}

function typeOf(node: Node): string {
  if (node.anyOf) return node.anyOf.map(typeOf).join(" or ");
  if (node.const !== undefined) return String(node.const);
  if (node.enum) return node.enum.map((v) => String(v)).join(" \\| ");
  if (node.type === "array") return node.items?.properties ? "list of objects" : `list of ${node.items?.type ?? "any"}`;
  if (node.type === "object" && typeof node.additionalProperties === "object")
    return node.additionalProperties.properties ? "map of objects" : `map of ${node.additionalProperties.type ?? "any"}`;
  return node.type ?? "any";
}

export const REFERENCE_START = "<!-- config-reference:start (npm run docs:config writes this table) -->";
export const REFERENCE_END = "<!-- config-reference:end -->";

/** The Markdown table, between its markers, exactly as docs/reference/configuration.md holds it. */
export function configReference(): string {
  const cell = (text: string) => text.replace(/\|/g, "\\|").replace(/\n/g, " ");
  const lines = [
    "| setting | type | default | env | what it does |",
    "| --- | --- | --- | --- | --- |",
    ...configRows().map((r) => `| \`${r.key}\` | ${r.type} | ${r.default} | ${r.env ? `\`${r.env}\`` : ""} | ${cell(r.description ?? "")} |`),
  ];
  return [REFERENCE_START, ...lines, REFERENCE_END].join("\n");
}

/** The page with its reference table replaced (or undefined when it has no markers). */
export function withReference(readme: string): string | undefined {
  const start = readme.indexOf(REFERENCE_START);
  const end = readme.indexOf(REFERENCE_END);
  if (start < 0 || end < start) return undefined;
  return readme.slice(0, start) + configReference() + readme.slice(end + REFERENCE_END.length);
}

/**
 * What the example file sets where the schema has no default and a value is needed for it to load
 * and show its shape: one stdio upstream (the bundled demo server) with one tool policy.
 */
const EXAMPLE_VALUES: Record<string, unknown> = {
  "upstreams[].stdio.command": "node",
  "upstreams[].stdio.args": ["dist/demo/main.js"],
};
/** Keys shown commented out: one of two alternatives, or a map entry named for the example. */
const EXAMPLE_OFF = new Set(["upstreams[].http", "store.cluster", "store.sentinel"]);
const EXAMPLE_ON = new Set(["upstreams[].stdio"]);
const EXAMPLE_ENTRY = "run_migration";
const WIDTH = 100;

/**
 * config/taskgate.example.yaml: every setting of the schema with its description; settings with a
 * default are set to it, the others are commented out, so the file loads as it is and changes
 * nothing a missing file would not (apart from its one upstream).
 */
export function configExample(): string {
  const root = z.toJSONSchema(ConfigSchema, { io: "input", unrepresentable: "any" }) as Node;
  const out = [
    "# taskgate configuration: every setting, with its default and what it does.",
    "# Generated from src/config/schema.ts by `npm run docs:config`; do not edit by hand.",
    "# Precedence: command-line flags > TASKGATE_* environment variables > this file > the defaults.",
    "# Durations are in milliseconds, sizes in bytes; the unit is in every key's name.",
    "# A commented-out key has no default: uncomment it to set it. The one upstream is the bundled",
    "# demo server, run from the package's folder; put your server's command there.",
  ];
  emitProperties(root, "", 0, true, out);
  return `${out.join("\n")}\n`;
}

function emitProperties(node: Node, path: string, indent: number, active: boolean, out: string[]): void {
  for (const [key, child] of Object.entries(node.properties ?? {})) emitKey(key, child, path ? `${path}.${key}` : key, indent, active, out);
}

function emitKey(key: string, raw: Node, path: string, indent: number, active: boolean, out: string[]): void {
  const node = unwrap(raw);
  const pad = " ".repeat(indent);
  const description = raw.description ?? node.description;
  const env = ENV_BY_PATH.get(path);
  const note = [description, env ? `Env: ${env}.` : undefined].filter(Boolean).join(" ");
  if (indent === 0) out.push("");
  for (const line of wrap(note, WIDTH - indent - 2)) out.push(`${pad}# ${line}`);
  const on = EXAMPLE_ON.has(path) || (active && !EXAMPLE_OFF.has(path));
  const hash = on ? "" : "# ";
  const example = EXAMPLE_VALUES[path];
  if (example !== undefined) {
    out.push(`${pad}${hash}${key}: ${inline(example)}`);
    return;
  }
  if (node.type === "object" && node.properties) {
    const section = on && (raw.default !== undefined || EXAMPLE_ON.has(path));
    const body: string[] = [];
    emitProperties(node, path, indent + 2, section, body);
    // A section none of whose keys is set stays commented out: an empty key would read as null.
    const set = section && body.some((line) => !line.trimStart().startsWith("#"));
    out.push(`${pad}${set ? "" : "# "}${key}:`, ...body);
    return;
  }
  if (node.type === "array" && node.items?.properties) {
    const item = unwrap(node.items);
    const list = on && path === "upstreams";
    out.push(`${pad}${list ? "" : "# "}${key}:`);
    out.push(`${pad}  ${list ? "" : "# "}-`);
    emitProperties(item, `${path}[]`, indent + 4, list, out);
    return;
  }
  const values = typeof node.additionalProperties === "object" ? unwrap(node.additionalProperties) : undefined;
  if (values?.properties) {
    out.push(`${pad}${hash}${key}: ${inline(raw.default ?? {})}`);
    out.push(`${pad}#   ${EXAMPLE_ENTRY}:`);
    emitProperties(values, `${path}.<name>`, indent + 4, false, out);
    return;
  }
  const value = raw.default ?? node.default;
  if (value === undefined) out.push(`${pad}# ${key}: ${placeholder(node)}`);
  else out.push(`${pad}${hash}${key}: ${inline(value)}`);
}

/** An optional or nullable schema's own shape. */
function unwrap(node: Node): Node {
  const inner = node.anyOf?.find((n) => n.type !== "null");
  return inner ? { ...inner, description: node.description ?? inner.description, default: node.default ?? inner.default } : node;
}

function placeholder(node: Node): string {
  if (node.enum) return node.enum.map((v) => String(v)).join(" | ");
  if (node.type === "array") return "[]";
  if (node.type === "object") return "{}";
  return `<${node.type ?? "value"}>`;
}

function inline(value: unknown): string {
  return stringify(value, { collectionStyle: "flow", lineWidth: 0 }).trimEnd();
}

function wrap(text: string, width: number): string[] {
  const lines: string[] = [];
  let line = "";
  for (const word of text.split(/\s+/).filter(Boolean)) {
    if (line && line.length + 1 + word.length > width) {
      lines.push(line);
      line = word;
    } else line = line ? `${line} ${word}` : word;
  }
  if (line) lines.push(line);
  return lines;
}
