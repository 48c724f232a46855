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
  logLevel: "log.level",
  upstream: "upstreams",
  adminToken: "admin.token",
};
const ENV_BY_PATH = new Map(Object.entries(ENV_PATHS).map(([k, path]) => [path, ENV_NAMES[k as keyof typeof ENV_PATHS]]));

/** Every setting of the zod schema, in schema order: the README's reference table is made from this. */
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

/** The Markdown table, between its markers, exactly as the README holds it. */
export function configReference(): string {
  const cell = (text: string) => text.replace(/\|/g, "\\|").replace(/\n/g, " ");
  const lines = [
    "| setting | type | default | env | what it does |",
    "| --- | --- | --- | --- | --- |",
    ...configRows().map((r) => `| \`${r.key}\` | ${r.type} | ${r.default} | ${r.env ? `\`${r.env}\`` : ""} | ${cell(r.description ?? "")} |`),
  ];
  return [REFERENCE_START, ...lines, REFERENCE_END].join("\n");
}

/** The README with its reference table replaced (or undefined when it has no markers). */
export function withReference(readme: string): string | undefined {
  const start = readme.indexOf(REFERENCE_START);
  const end = readme.indexOf(REFERENCE_END);
  if (start < 0 || end < start) return undefined;
  return readme.slice(0, start) + configReference() + readme.slice(end + REFERENCE_END.length);
}
