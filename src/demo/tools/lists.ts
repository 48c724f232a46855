import { z } from "zod";
import { defineTool, text } from "./tool.js";

const LISTS = ["tools", "prompts", "resources"] as const;

/**
 * Announces that lists changed, as a server whose tools, prompts or resources come and go would:
 * for trying list-change notifications (on 2026-07-28 they reach `subscriptions/listen` streams
 * that asked for them).
 */
export const changeLists = defineTool({
  name: "change-lists",
  description: "Sends notifications/{tools,prompts,resources}/list_changed for the lists named (all by default).",
  annotations: { title: "Change lists", readOnlyHint: false, idempotentHint: true, openWorldHint: false },
  input: z
    .object({
      lists: z
        .array(z.enum(LISTS))
        .default([...LISTS])
        .describe("Which lists to announce as changed."),
    })
    .strict(),
  run: async ({ lists }, ctx) => {
    for (const list of lists) await ctx.notify(`notifications/${list}/list_changed`);
    return text(`Announced: ${lists.join(", ") || "nothing"}`);
  },
});

/**
 * A tool with an argument marked `x-mcp-header` (SEP-2243, MCP 2026-07-28 "Custom Headers from
 * Tool Parameters": https://modelcontextprotocol.io/specification/2026-07-28/basic/transports):
 * a 2026-07-28 client mirrors `region` into `Mcp-Param-Region`, so a load balancer can route on it.
 */
export const routed = defineTool({
  name: "routed",
  description: "Returns the text with the region it was routed to; region travels in the Mcp-Param-Region header too.",
  annotations: { title: "Routed", readOnlyHint: true, idempotentHint: true, openWorldHint: false },
  input: z
    .object({
      region: z.string().meta({ "x-mcp-header": "Region" }).describe("Where to route the call; mirrored into Mcp-Param-Region."),
      text: z.string().default("").describe("Text to return."),
    })
    .strict(),
  run: async ({ region, text: value }) => text(`${value} (routed to ${region})`),
});
