import { z } from "zod";
import { defineTool, text } from "./tool.js";
import { sleepInput, sleepReporting } from "./slow.js";

/**
 * The tool that asks a question mid-call: it is how the gateway's input bridge
 * (elicitation → input_required → tasks/update) is exercised against an unmodified server.
 */
export const deploy = defineTool({
  name: "deploy",
  description: "Asks the client to confirm (elicitation), then deploys for the given seconds with progress.",
  annotations: { title: "Deploy", readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false },
  input: z
    .object({
      service: z.string().min(1).describe("Name of the service to deploy."),
      seconds: sleepInput.seconds.default(1).describe("How long the deployment takes."),
    })
    .strict(),
  run: async ({ service, seconds }, ctx) => {
    ctx.log(`deploy started (${service})`);
    const answer = await ctx.elicit({
      mode: "form",
      message: `Deploy ${service}?`,
      requestedSchema: {
        type: "object",
        properties: { confirm: { type: "boolean", title: "Confirm", description: `Deploy ${service} now` } },
        required: ["confirm"],
      },
    });
    if (answer.action !== "accept" || answer.content?.["confirm"] !== true) {
      return text(`Deployment of ${service} cancelled`);
    }
    await sleepReporting(ctx, seconds, 1000).catch((err: unknown) => {
      ctx.log(`deploy of ${service} cancelled`);
      throw err;
    });
    return text(`Deployed ${service}`);
  },
});
