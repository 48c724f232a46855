import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { formatProblems, loadConfig } from "../../src/config/load.js";
import { ConfigSchema } from "../../src/config/schema.js";
import { configExample, configReference, configRows, REFERENCE_END, REFERENCE_START, withReference } from "../../src/config/reference.js";

const ROOT = resolve(import.meta.dirname, "../..");
const PAGE = readFileSync(resolve(ROOT, "docs/reference/configuration.md"), "utf8");
const EXAMPLE = readFileSync(resolve(ROOT, "config/taskgate.example.yaml"), "utf8");

describe("the configuration reference (docs/reference/configuration.md)", () => {
  it("is exactly what the schema generates (run `npm run docs:config` after changing the schema)", () => {
    const start = PAGE.indexOf(REFERENCE_START);
    const end = PAGE.indexOf(REFERENCE_END);
    expect(start).toBeGreaterThan(0);
    expect(PAGE.slice(start, end + REFERENCE_END.length)).toBe(configReference());
  });

  it("describes every setting, once", () => {
    const rows = configRows();
    expect(rows.filter((r) => !r.description).map((r) => r.key)).toEqual([]);
    expect(new Set(rows.map((r) => r.key)).size).toBe(rows.length);
    expect(rows.map((r) => r.key)).toEqual(
      expect.arrayContaining(["listen.port", "tasks.detachAfterMs", "admin.token", "upstreams[].tools.<name>.taskSupport"]),
    );
  });

  it("notices a drifted table", () => {
    const drifted = PAGE.replace("| `listen.port` | integer | `8080` |", "| `listen.port` | integer | `9999` |");
    expect(drifted).not.toBe(PAGE);
    expect(withReference(drifted)).toBe(PAGE);
  });
});

describe("config/taskgate.example.yaml", () => {
  it("is exactly what the schema generates (run `npm run docs:config` after changing the schema)", () => {
    expect(EXAMPLE).toBe(configExample());
  });

  it("loads, and sets every setting that has a default to that default", () => {
    const result = loadConfig({ argv: ["--config", "config/taskgate.example.yaml"], env: {}, cwd: ROOT, defaultUpstream: () => ({}) });
    if (!result.ok) throw new Error(formatProblems(result.problems));
    const defaults = ConfigSchema.parse({ upstreams: [{ stdio: { command: "node", args: ["dist/demo/main.js"] } }] });
    expect(result.config).toEqual(defaults);
  });

  it("names every setting of the reference, set or commented out", () => {
    const leaf = (key: string) => key.split(".").at(-1)?.replace("[]", "") ?? key;
    const missing = configRows()
      .map((r) => r.key)
      .filter((key) => !new RegExp(`^\\s*(# )?(- )?${leaf(key)}:`, "m").test(EXAMPLE));
    expect(missing).toEqual([]);
  });
});
