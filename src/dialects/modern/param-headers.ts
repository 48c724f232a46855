import { GatewayError } from "../../wire/errors.js";
import { decodeHeader } from "./wire.js";

/**
 * SEP-2243 custom headers (MCP 2026-07-28, "Custom Headers from Tool Parameters":
 * https://modelcontextprotocol.io/specification/2026-07-28/basic/transports): a tool's input
 * schema may mark a parameter with `x-mcp-header: Name`; a client then mirrors the argument into
 * `Mcp-Param-Name`, and a server that reads the body must check the two agree (400, -32020).
 */
export interface HeaderDeclaration {
  /** Property names from the arguments' root (declarations sit under `properties`, at any depth). */
  path: readonly string[];
  header: string;
  type: string;
}

/** RFC 9110 token: no spaces, controls or delimiters. */
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
/** The spec names string, integer and boolean; number too, as the conformance suite's fixtures use it. */
const PRIMITIVE = new Set(["string", "integer", "boolean", "number"]);
const DECIMAL = /^-?\d+(\.\d+)?$/;

/**
 * The declarations of one tool's input schema, or undefined when they break the SEP's rules
 * (empty or non-token name, not primitive, not unique ignoring case): a client must drop such a
 * tool, so taskgate does not enforce it either. Only chains of `properties` are followed; the
 * schema is the upstream's, so the walk is bounded.
 */
export function headerDeclarations(inputSchema: unknown): HeaderDeclaration[] | undefined {
  const found: HeaderDeclaration[] = [];
  const seen = new Set<string>();
  const visit = (node: unknown, path: string[]): boolean => {
    if (typeof node !== "object" || node === null || path.length > 32) return true;
    const schema = node as Record<string, unknown>;
    if (path.length > 0 && "x-mcp-header" in schema) {
      const header = schema["x-mcp-header"];
      const type = schema.type;
      if (typeof header !== "string" || !TOKEN.test(header) || typeof type !== "string" || !PRIMITIVE.has(type)) return false;
      if (seen.has(header.toLowerCase())) return false;
      seen.add(header.toLowerCase());
      found.push({ path, header, type });
    }
    const properties = schema.properties;
    if (typeof properties !== "object" || properties === null) return true;
    return Object.entries(properties).every(([key, child]) => visit(child, [...path, key]));
  };
  return visit(inputSchema, []) ? found : undefined;
}

/**
 * Each declared argument present in the body (not null) must come with its header, decoding to
 * the same value: strings as they are, booleans as `true`/`false`, numbers compared as numbers.
 * An absent or null argument expects no header. Throws HeaderMismatch otherwise.
 */
export function checkParamHeaders(declarations: readonly HeaderDeclaration[], args: unknown, header: (name: string) => string | undefined): void {
  for (const declaration of declarations) {
    const value = valueAt(args, declaration.path);
    // Absent or null: no header expected. Not a primitive: the upstream's argument check answers it.
    if (value === undefined || value === null || typeof value === "object") continue;
    const name = `Mcp-Param-${declaration.header}`;
    const raw = header(name);
    if (raw === undefined) throw new GatewayError("header_mismatch", `${name} is required: the body carries ${declaration.path.join(".")}`);
    const decoded = decodeHeader(raw);
    if (decoded === undefined) throw new GatewayError("header_mismatch", `${name} is not valid =?base64?…?= (canonical base64 of UTF-8)`);
    if (!matches(decoded, value)) throw new GatewayError("header_mismatch", `${name} must equal arguments.${declaration.path.join(".")}`);
  }
}

function matches(decoded: string, value: unknown): boolean {
  if (typeof value === "number") return DECIMAL.test(decoded) && Number(decoded) === value;
  if (typeof value === "boolean") return decoded === String(value);
  return typeof value === "string" && decoded === value;
}

function valueAt(root: unknown, path: readonly string[]): unknown {
  let node = root;
  for (const key of path) {
    if (typeof node !== "object" || node === null || !Object.hasOwn(node, key)) return undefined;
    node = (node as Record<string, unknown>)[key];
  }
  return node;
}
