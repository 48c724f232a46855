import { parseArgs } from "node:util";
import type { DemoServerOptions } from "./server.js";

export type DemoArgs = { ok: true; options: DemoServerOptions } | { ok: false; problem: string };

export const DEMO_USAGE = "usage: demo-server [--http PORT [--host HOST] [--event-store]] [--native-tasks | --modern [--tasks-extension]]";

/**
 * `[--http PORT [--host HOST] [--event-store]] [--native-tasks | --modern [--tasks-extension]]`,
 * shared by dist/demo/main.js and `taskgate demo-server`. `--native-tasks`: the server that runs
 * its tools as tasks of its own. `--modern`: the 2026-07-28-only server (SDK 2.x), with
 * `--tasks-extension` the one that runs `research` as a task of the tasks extension.
 * `--event-store` (HTTP): SSE events carry ids, and a lost response stream can be resumed.
 */
export function parseDemoArgs(argv: string[]): DemoArgs {
  let values: {
    http?: string | undefined;
    host?: string | undefined;
    "native-tasks"?: boolean | undefined;
    modern?: boolean | undefined;
    "tasks-extension"?: boolean | undefined;
    "event-store"?: boolean | undefined;
  };
  try {
    ({ values } = parseArgs({
      args: argv,
      options: {
        http: { type: "string" },
        host: { type: "string" },
        "native-tasks": { type: "boolean" },
        modern: { type: "boolean" },
        "tasks-extension": { type: "boolean" },
        "event-store": { type: "boolean" },
      },
      strict: true,
      allowPositionals: false,
    }));
  } catch (err) {
    return { ok: false, problem: `${(err as Error).message}\n${DEMO_USAGE}` };
  }
  if (values["tasks-extension"] === true && values.modern !== true) return { ok: false, problem: `--tasks-extension needs --modern\n${DEMO_USAGE}` };
  if (values["native-tasks"] === true && values.modern === true)
    return { ok: false, problem: `--native-tasks and --modern are two different servers\n${DEMO_USAGE}` };
  const modern = values.modern === true ? { modern: true, ...(values["tasks-extension"] === true ? { tasksExtension: true } : {}) } : {};
  const mode = values["native-tasks"] === true ? { nativeTasks: true } : modern;
  if (values.http === undefined) {
    if (values["event-store"] === true) return { ok: false, problem: `--event-store needs --http\n${DEMO_USAGE}` };
    return values.host === undefined ? { ok: true, options: mode } : { ok: false, problem: `--host needs --http\n${DEMO_USAGE}` };
  }
  if (values["event-store"] === true && values.modern === true)
    return { ok: false, problem: `--event-store: the 2026-07-28 wire resumes no stream\n${DEMO_USAGE}` };
  const port = Number(values.http);
  if (!/^\d+$/.test(values.http) || port > 65535) {
    return { ok: false, problem: `--http: expected a port number (0-65535), got "${values.http}"` };
  }
  const store = values["event-store"] === true ? { eventStore: true } : {};
  return { ok: true, options: { ...mode, ...store, http: values.host === undefined ? { port } : { port, host: values.host } } };
}
