import { parseArgs } from "node:util";
import type { DemoServerOptions } from "./server.js";

export type DemoArgs = { ok: true; options: DemoServerOptions } | { ok: false; problem: string };

export const DEMO_USAGE = "usage: demo-server [--http PORT] [--host HOST] [--native-tasks]";

/**
 * `[--http PORT] [--host HOST] [--native-tasks]`, shared by dist/demo/main.js and `taskgate
 * demo-server`. `--native-tasks`: the server that runs its tools as tasks of its own (#15).
 */
export function parseDemoArgs(argv: string[]): DemoArgs {
  let values: { http?: string | undefined; host?: string | undefined; "native-tasks"?: boolean | undefined };
  try {
    ({ values } = parseArgs({
      args: argv,
      options: { http: { type: "string" }, host: { type: "string" }, "native-tasks": { type: "boolean" } },
      strict: true,
      allowPositionals: false,
    }));
  } catch (err) {
    return { ok: false, problem: `${(err as Error).message}\n${DEMO_USAGE}` };
  }
  const native = values["native-tasks"] === true ? { nativeTasks: true } : {};
  if (values.http === undefined) {
    return values.host === undefined ? { ok: true, options: native } : { ok: false, problem: `--host needs --http\n${DEMO_USAGE}` };
  }
  const port = Number(values.http);
  if (!/^\d+$/.test(values.http) || port > 65535) {
    return { ok: false, problem: `--http: expected a port number (0-65535), got "${values.http}"` };
  }
  return { ok: true, options: { ...native, http: values.host === undefined ? { port } : { port, host: values.host } } };
}
