import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, relative, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { parse, parseAllDocuments } from "yaml";
import { formatProblems, loadConfig } from "../../src/config/load.js";
import { configRows, REFERENCE_END, REFERENCE_START } from "../../src/config/reference.js";

/**
 * The user's pages, checked as a reader meets them: every relative link opens, every YAML or JSON
 * block parses, and every setting a page names exists in the schema.
 */
const ROOT = resolve(import.meta.dirname, "../..");

function markdownFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return markdownFiles(path);
    return name.endsWith(".md") ? [path] : [];
  });
}

const PAGES = [
  ...["README.md", "CONTRIBUTING.md", "SECURITY.md", "CHANGELOG.md"].map((f) => join(ROOT, f)).filter((f) => existsSync(f)),
  ...markdownFiles(join(ROOT, "docs")),
];

/** Prose and code of a page apart: fenced blocks with their language, and the text outside them. */
function split(text: string): { prose: string; blocks: { lang: string; body: string; line: number }[] } {
  const blocks: { lang: string; body: string; line: number }[] = [];
  const prose: string[] = [];
  let open: { lang: string; lines: string[]; line: number } | undefined;
  text.split("\n").forEach((line, i) => {
    const fence = /^\s*```(\S*)/.exec(line);
    if (fence && !open) open = { lang: fence[1] ?? "", lines: [], line: i + 1 };
    else if (fence && open) {
      blocks.push({ lang: open.lang, body: open.lines.join("\n"), line: open.line });
      open = undefined;
    } else if (open) open.lines.push(line);
    else prose.push(line);
  });
  return { prose: prose.join("\n"), blocks };
}

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens. */
function slug(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, "")
    .replace(/\s/g, "-");
}

function anchors(file: string): Set<string> {
  const { prose } = split(readFileSync(file, "utf8"));
  const seen = new Map<string, number>();
  const out = new Set<string>();
  for (const m of prose.matchAll(/^#{1,6} (.+)$/gm)) {
    const base = slug(m[1] ?? "");
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    out.add(n === 0 ? base : `${base}-${n}`);
  }
  return out;
}

/** Broken relative links of one page's prose, as "target (why)". */
function brokenLinks(file: string, text: string): string[] {
  const { prose } = split(text);
  const broken: string[] = [];
  for (const m of prose.matchAll(/\]\(([^)\s]+)\)/g)) {
    const target = m[1] ?? "";
    if (/^[a-z]+:/i.test(target)) continue;
    const [path = "", anchor] = target.split("#");
    const resolved = path === "" ? file : resolve(dirname(file), path);
    if (!existsSync(resolved)) broken.push(`${target} (no such file)`);
    else if (anchor && resolved.endsWith(".md") && !anchors(resolved).has(anchor)) broken.push(`${target} (no such heading)`);
  }
  return broken;
}

/** Blocks marked yaml or json that do not parse, as "line: error". */
function unparsedBlocks(text: string): string[] {
  const bad: string[] = [];
  for (const block of split(text).blocks) {
    if (block.lang === "yaml" || block.lang === "yml") {
      const errors = parseAllDocuments(block.body).flatMap((d) => ("errors" in d ? d.errors : []));
      if (errors.length > 0) bad.push(`${block.line}: ${errors[0]?.message}`);
    } else if (block.lang === "json") {
      try {
        JSON.parse(block.body);
      } catch (err) {
        bad.push(`${block.line}: ${(err as Error).message}`);
      }
    }
  }
  return bad;
}

const TOP_LEVEL = new Set(configRows().map((r) => r.key.split(/[.[]/)[0]));

/**
 * YAML blocks that are taskgate configuration (every top-level key a section of the schema) that
 * do not load as a configuration file would, as "line: problems". `${NAME}` references get a value
 * valid for a secret or a token's SHA-256; a block without upstreams gets one.
 */
function unloadableConfigs(text: string): string[] {
  const bad: string[] = [];
  for (const block of split(text).blocks) {
    if (block.lang !== "yaml") continue;
    const value: unknown = parse(block.body);
    if (!value || typeof value !== "object" || Array.isArray(value)) continue;
    if (!Object.keys(value).every((key) => TOP_LEVEL.has(key))) continue;
    const dir = mkdtempSync(join(tmpdir(), "taskgate-docs-"));
    try {
      const config = "upstreams" in value ? value : { ...value, upstreams: [{ stdio: { command: "node" } }] };
      writeFileSync(join(dir, "taskgate.yaml"), JSON.stringify(config));
      const env = Object.fromEntries([...block.body.matchAll(/\$\{([A-Z0-9_]+)\}/g)].map((m) => [m[1], "a".repeat(64)]));
      const result = loadConfig({ argv: ["--config", "taskgate.yaml"], env, cwd: dir, defaultUpstream: () => ({}) });
      if (!result.ok) bad.push(`${block.line}: ${formatProblems(result.problems)}`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }
  return bad;
}
const KEYS = configRows().map((r) => r.key);
/** Names shaped like settings that are something else: audit events. */
const NOT_SETTINGS = new Set(["auth.failed"]);

/** Settings named in a page (`tasks.detachAfterMs`, `upstreams[].tools.<name>.taskSupport`) that the schema lacks. */
function unknownSettings(text: string): string[] {
  const unknown = new Set<string>();
  // The generated reference is checked against the schema on its own (config-reference.test.ts).
  const start = text.indexOf(REFERENCE_START);
  const prose = start < 0 ? text : text.slice(0, start) + text.slice(text.indexOf(REFERENCE_END));
  for (const m of split(prose).prose.matchAll(/`([^`\n]+)`/g)) {
    const name = (m[1] ?? "").split(/[:=\s]/)[0] ?? "";
    const top = name.split(/[.[]/)[0] ?? "";
    if (!TOP_LEVEL.has(top) || NOT_SETTINGS.has(name) || !/^[A-Za-z]+(\[\])?(\.(<[a-z]+>|[A-Za-z]+)(\[\])?)+$/.test(name)) continue;
    const key = name.replace(/<[a-z]+>/g, "<name>");
    if (!KEYS.some((k) => k === key || k.startsWith(`${key}.`) || k.startsWith(`${key}[]`))) unknown.add(name);
  }
  return [...unknown];
}

/**
 * Issue numbers a page cites (`#16`, `issue 18`), which a reader of the docs cannot open. URLs and
 * link targets are left out, so a `#anchor` or a forge URL is not one.
 */
function issueReferences(text: string): string[] {
  const prose = split(text)
    .prose.replace(/\]\([^)\s]*\)/g, "]()")
    .replace(/\b[a-z]+:\/\/\S+/gi, "");
  return [...prose.matchAll(/(?<![\w&/])#\d+\b|\bissues? \d+\b/gi)].map((m) => m[0]);
}

describe("the docs", () => {
  it.each(PAGES.map((p) => [relative(ROOT, p), p]))("%s: relative links resolve", (_name, file) => {
    expect(brokenLinks(file, readFileSync(file, "utf8"))).toEqual([]);
  });

  it.each(PAGES.map((p) => [relative(ROOT, p), p]))("%s: YAML and JSON blocks parse, and configurations load", (_name, file) => {
    const text = readFileSync(file, "utf8");
    expect(unparsedBlocks(text)).toEqual([]);
    expect(unloadableConfigs(text)).toEqual([]);
  });

  // Contributor pages name the code (`store.createTask`), not settings.
  const USER_PAGES = PAGES.filter((p) => !p.includes("/docs/contributing/"));
  it.each(USER_PAGES.map((p) => [relative(ROOT, p), p]))("%s: every setting named exists", (_name, file) => {
    expect(unknownSettings(readFileSync(file, "utf8"))).toEqual([]);
  });

  it.each(PAGES.map((p) => [relative(ROOT, p), p]))("%s: cites no issue number", (_name, file) => {
    expect(issueReferences(readFileSync(file, "utf8"))).toEqual([]);
  });

  it("finds what it looks for", () => {
    const page = join(ROOT, "docs/getting-started.md");
    expect(brokenLinks(page, "[a](guides/retrofit-stdio.md) [b](nowhere.md) [c](../README.md#no-such-heading)")).toEqual([
      "nowhere.md (no such file)",
      "../README.md#no-such-heading (no such heading)",
    ]);
    expect(unparsedBlocks('```yaml\na: [1\n```\n```json\n{"a":}\n```\n```yaml\na: 1\n```')).toHaveLength(2);
    expect(unknownSettings("`tasks.detachAfterMs` `tasks.callTimeoutMs` `upstreams[].tools.<tool>.taskSupport` `auth.mode: oauth` `limits`")).toEqual([
      "tasks.callTimeoutMs",
    ]);
    expect(unloadableConfigs("```yaml\ntasks: { detachAfterMs: 5 }\n```\n```yaml\ntasks: { detachAfterMs: -1 }\n```\n```yaml\nkind: Pod\n```")).toHaveLength(1);
    expect(issueReferences("done in #14 (issue 16, Issue 18); [x](#anchor) https://example.com/a/issues/3#4 &#8212;")).toEqual(["#14", "issue 16", "Issue 18"]);
    expect(slug("Callers that know nothing of tasks: `tasks.unawareClients: handle`")).toBe("callers-that-know-nothing-of-tasks-tasksunawareclients-handle");
  });
});
