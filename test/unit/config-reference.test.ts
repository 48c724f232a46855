import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { configReference, configRows, REFERENCE_END, REFERENCE_START, withReference } from "../../src/config/reference.js";

const README = readFileSync(resolve(import.meta.dirname, "../../README.md"), "utf8");

describe("the configuration reference in the README", () => {
  it("is exactly what the schema generates (run `npm run docs:config` after changing the schema)", () => {
    const start = README.indexOf(REFERENCE_START);
    const end = README.indexOf(REFERENCE_END);
    expect(start).toBeGreaterThan(0);
    expect(README.slice(start, end + REFERENCE_END.length)).toBe(configReference());
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
    const drifted = README.replace("| `listen.port` | integer | `8080` |", "| `listen.port` | integer | `9999` |");
    expect(drifted).not.toBe(README);
    expect(withReference(drifted)).toBe(README);
  });
});
