import { parseDemoArgs } from "./args.js";
import { runDemoServer, DEFAULT_DEMO_HOST, type RunningDemoServer } from "./server.js";
import { DEMO_HTTP_PATH } from "./http-path.js";

/**
 * `demo-server [--modern [--tasks-extension]] [--http PORT] [--host HOST]`, for dist/demo/main.js and `taskgate demo-server`.
 * Resolves with an exit code once serving (0) or on bad arguments (2); the process then lives
 * until SIGTERM/SIGINT, or until stdin ends in stdio mode. Everything human goes to stderr:
 * in stdio mode stdout carries MCP and nothing else.
 */
export async function demoServerCommand(argv: string[]): Promise<number> {
  const args = parseDemoArgs(argv);
  if (!args.ok) {
    process.stderr.write(`${args.problem}\n`);
    return 2;
  }
  const running = await runDemoServer(args.options);
  // Handlers before the listening line: whoever waits for that line may signal at once.
  process.once("SIGTERM", () => exitAfterClose(running));
  process.once("SIGINT", () => exitAfterClose(running));
  if (args.options.http) {
    const host = args.options.http.host ?? DEFAULT_DEMO_HOST;
    process.stderr.write(`demo server listening on http://${hostForUrl(host)}:${running.port}${DEMO_HTTP_PATH}\n`);
  } else {
    // The parent closing our stdin means it is gone: exit rather than linger as an orphan.
    process.stdin.once("end", () => exitAfterClose(running));
  }
  return 0;
}

function exitAfterClose(running: RunningDemoServer): void {
  running.close().then(
    () => process.exit(0),
    (err: unknown) => {
      process.stderr.write(`demo server: close failed: ${String(err)}\n`);
      process.exit(1);
    },
  );
}

/** IPv6 literals need brackets in a URL. */
function hostForUrl(host: string): string {
  return host.includes(":") ? `[${host}]` : host;
}
