import { z } from "zod";
import { defineTool, text, type ToolContext } from "./tool.js";
import { formatSeconds, pauseWithProgress, untilAborted } from "./pause.js";

const seconds = z.number().nonnegative().max(86_400);
const progressIntervalMs = z.number().int().positive().max(3_600_000);

/** Sleeps like a blocking tool, telling the caller how far it got; stops when cancelled. */
export async function sleepReporting(ctx: ToolContext, totalSeconds: number, intervalMs: number): Promise<void> {
  await pauseWithProgress({
    seconds: totalSeconds,
    intervalMs,
    signal: ctx.signal,
    onTick: (elapsed) => ctx.progress(elapsed, totalSeconds, `Slept ${formatSeconds(elapsed)}/${formatSeconds(totalSeconds)} s`),
  });
}

export const sleep = defineTool({
  name: "sleep",
  description: "Sleeps for the given seconds, sending progress every interval, and stops when cancelled.",
  annotations: { title: "Sleep", readOnlyHint: true, idempotentHint: true, openWorldHint: false },
  input: z
    .object({
      seconds: seconds.describe("How long to sleep; fractions allowed."),
      progressIntervalMs: progressIntervalMs.default(1000).describe("Milliseconds between progress notifications."),
      label: z.string().max(200).optional().describe("Named in the result, so a caller can tell many equal sleeps apart."),
    })
    .strict(),
  run: async (args, ctx) => {
    ctx.log(`sleep started (${formatSeconds(args.seconds)} s)`);
    await sleepReporting(ctx, args.seconds, args.progressIntervalMs).catch((err: unknown) => {
      ctx.log(`sleep cancelled`);
      throw err;
    });
    return text(`Slept ${formatSeconds(args.seconds)} s${args.label === undefined ? "" : ` (${args.label})`}`);
  },
});

export const hang = defineTool({
  name: "hang",
  description: "Never answers; only cancellation ends it.",
  annotations: { title: "Hang", readOnlyHint: true, idempotentHint: true, openWorldHint: false },
  input: z.object({}).strict(),
  run: async (_args, ctx) => {
    ctx.log("hang started");
    return untilAborted(ctx.signal).catch((err: unknown) => {
      ctx.log("hang cancelled");
      throw err;
    });
  },
});

export const sleepInput = { seconds, progressIntervalMs };
