import { describe, expect, it } from "vitest";
import { checkParamHeaders, headerDeclarations } from "../../src/dialects/modern/param-headers.js";

const schema = (properties: Record<string, unknown>) => ({ type: "object", properties });

describe("SEP-2243 x-mcp-header declarations and Mcp-Param-* headers", () => {
  it("finds declarations under properties at any depth, and none elsewhere", () => {
    const found = headerDeclarations(
      schema({
        region: { type: "string", "x-mcp-header": "Region" },
        opts: { type: "object", properties: { dry: { type: "boolean", "x-mcp-header": "Dry-Run" } } },
        plain: { type: "string" },
      }),
    );
    expect(found).toEqual([
      { path: ["region"], header: "Region", type: "string" },
      { path: ["opts", "dry"], header: "Dry-Run", type: "boolean" },
    ]);
    expect(headerDeclarations({ type: "object" })).toEqual([]);
    expect(headerDeclarations(undefined)).toEqual([]);
  });

  it("refuses a tool whose declarations break the rules, so none of them is enforced", () => {
    for (const bad of [
      schema({ a: { type: "string", "x-mcp-header": "" } }),
      schema({ a: { type: "string", "x-mcp-header": "Has Space" } }),
      schema({ a: { type: "string", "x-mcp-header": "Colon:" } }),
      schema({ a: { type: "object", "x-mcp-header": "A" } }),
      schema({ a: { "x-mcp-header": "A" } }),
      schema({ a: { type: "string", "x-mcp-header": "Same" }, b: { type: "integer", "x-mcp-header": "SAME" } }),
    ])
      expect(headerDeclarations(bad), JSON.stringify(bad)).toBeUndefined();
  });

  it("checks each present argument against its header, decoded, by type", () => {
    const declarations = headerDeclarations(
      schema({ n: { type: "integer", "x-mcp-header": "N" }, b: { type: "boolean", "x-mcp-header": "B" }, s: { type: "string", "x-mcp-header": "S" } }),
    )!;
    const headers = (h: Record<string, string>) => (name: string) => h[name];
    expect(() =>
      checkParamHeaders(
        declarations,
        { n: 42, b: false, s: "é" },
        headers({ "Mcp-Param-N": "42.0", "Mcp-Param-B": "false", "Mcp-Param-S": "=?base64?w6k=?=" }),
      ),
    ).not.toThrow();
    expect(() => checkParamHeaders(declarations, { n: null }, headers({}))).not.toThrow();
    for (const [args, h] of [
      [{ n: 42 }, {}],
      [{ n: 42 }, { "Mcp-Param-N": "0x2a" }],
      [{ b: true }, { "Mcp-Param-B": "TRUE" }],
      [{ s: "é" }, { "Mcp-Param-S": "=?base64?w6k?=" }],
      [{ s: "x" }, { "Mcp-Param-S": "=?base64?/w==?=" }], // not UTF-8
    ] as const)
      expect(() => checkParamHeaders(declarations, args, headers(h)), JSON.stringify([args, h])).toThrow(
        expect.objectContaining({ code: -32020, status: 400 }),
      );
  });
});
