import { parseArgs } from "node:util";
import type { DemoServerOptions } from "./server.js";

export type DemoArgs = { ok: true; options: DemoServerOptions } | { ok: false; problem: string };

export const DEMO_USAGE = "usage: demo-server [--modern [--tasks-extension]] [--http PORT] [--host HOST]";

/** `[--modern] [--http PORT] [--host HOST]`, shared by dist/demo/main.js and `taskgate demo-server`. */
export function parseDemoArgs(argv: string[]): DemoArgs {
  let values: { http?: string | undefined; host?: string | undefined; modern?: boolean | undefined; "tasks-extension"?: boolean | undefined };
  try {
    ({ values } = parseArgs({
      args: argv,
      options: { http: { type: "string" }, host: { type: "string" }, modern: { type: "boolean" }, "tasks-extension": { type: "boolean" } },
      strict: true,
      allowPositionals: false,
    }));
  } catch (err) {
    return { ok: false, problem: `${(err as Error).message}\n${DEMO_USAGE}` };
  }
  if (values["tasks-extension"] === true && values.modern !== true) return { ok: false, problem: `--tasks-extension needs --modern\n${DEMO_USAGE}` };
  const mode = values.modern === true ? { modern: true, ...(values["tasks-extension"] === true ? { tasksExtension: true } : {}) } : {};
  if (values.http === undefined) {
    return values.host === undefined ? { ok: true, options: mode } : { ok: false, problem: `--host needs --http\n${DEMO_USAGE}` };
  }
  const port = Number(values.http);
  if (!/^\d+$/.test(values.http) || port > 65535) {
    return { ok: false, problem: `--http: expected a port number (0-65535), got "${values.http}"` };
  }
  return { ok: true, options: { ...mode, http: values.host === undefined ? { port } : { port, host: values.host } } };
}
