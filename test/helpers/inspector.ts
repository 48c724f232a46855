import { execFile } from "node:child_process";
import { dirname, join } from "node:path";
import { ROOT } from "./processes.js";

/** The MCP Inspector's command line (1.0.x), a task-unaware client: a new session per run, no tasks capability. */
export const INSPECTOR_CLI = join(ROOT, "node_modules/@modelcontextprotocol/inspector-cli/build/cli.js");

/**
 * One `mcp-inspector-cli --cli <url> --method tools/call --tool-name <tool> --tool-arg k=v ...` run
 * as a child process; resolves with the JSON it prints (the CallToolResult). Bounded: killed
 * after `timeoutMs`.
 */
export function inspectorCall(
  url: string,
  tool: string,
  args: Record<string, unknown>,
  headers: Record<string, string> = {},
  timeoutMs = 30_000,
): Promise<any> {
  const argv = [INSPECTOR_CLI, "--cli", url, "--transport", "http", "--method", "tools/call", "--tool-name", tool];
  for (const [key, value] of Object.entries(args)) argv.push("--tool-arg", `${key}=${typeof value === "string" ? value : JSON.stringify(value)}`);
  for (const [key, value] of Object.entries(headers)) argv.push("--header", `${key}: ${value}`);
  return new Promise((resolve, reject) => {
    // Run from its own build folder: it finds its package.json by a path relative to the working directory.
    execFile(process.execPath, argv, { cwd: dirname(INSPECTOR_CLI), timeout: timeoutMs, killSignal: "SIGKILL" }, (err, stdout, stderr) => {
      if (err) return reject(new Error(`inspector ${tool} failed: ${err.message}\n${stderr}\n${stdout}`));
      try {
        resolve(JSON.parse(stdout));
      } catch {
        reject(new Error(`inspector ${tool} printed no JSON: ${stdout}\n${stderr}`));
      }
    });
  });
}
