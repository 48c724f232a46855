import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";

/**
 * The MCP Inspector v2 command line, `mcpdo`, as its README runs it: from the npm registry on
 * Node 22 (`npx -y -p node@22 -p @modelcontextprotocol/inspector@2.12.0`). It keeps its
 * connections in a daemon; each Mcpdo here has its own (a private daemon directory, token, catalog
 * and home), stopped by `stop()`.
 */
const PACKAGES = ["-p", "node@22", "-p", "@modelcontextprotocol/inspector@2.12.0"];

let installed: Promise<string> | undefined;

/** The folder holding `node` (22) and `mcpdo`, installed into npx's cache once per run. */
function binDir(): Promise<string> {
  installed ??= new Promise((resolve, reject) => {
    // The first run downloads both packages: bounded, but generously.
    execFile("npx", ["-y", ...PACKAGES, "sh", "-c", "command -v mcpdo"], { timeout: 240_000 }, (err, stdout, stderr) => {
      if (err) reject(new Error(`could not install mcpdo: ${err.message}\n${stderr}`));
      else resolve(dirname(stdout.trim()));
    });
  });
  return installed;
}

export class Mcpdo {
  private readonly home = mkdtempSync(join(tmpdir(), "mcpdo-"));
  private readonly env: NodeJS.ProcessEnv;

  constructor() {
    this.env = {
      ...process.env,
      HOME: this.home,
      MCP_INSPECTOR_DAEMON_DIR: join(this.home, "daemon"),
      MCP_INSPECTOR_DAEMON_TOKEN: randomBytes(24).toString("hex"),
      MCP_CATALOG_PATH: join(this.home, "mcp.json"),
      MCP_INSPECTOR_SECRET_STORE: "file",
    };
  }

  /**
   * `mcpdo --format json <args>`: the JSON it prints, also when it exits non-zero (a tool's error
   * result); rejects when it prints none. Bounded: killed after `timeoutMs`.
   */
  async run(args: string[], timeoutMs = 30_000): Promise<any> {
    const bin = await binDir();
    const env = { ...this.env, PATH: `${bin}:${process.env.PATH ?? ""}` };
    return new Promise((resolve, reject) => {
      execFile(join(bin, "mcpdo"), ["--format", "json", ...args], { env, timeout: timeoutMs, killSignal: "SIGKILL" }, (err, stdout, stderr) => {
        try {
          resolve(JSON.parse(stdout));
        } catch {
          reject(new Error(`mcpdo ${args.join(" ")} printed no JSON (${err?.message ?? "exit 0"}): ${stdout}\n${stderr}`));
        }
      });
    });
  }

  /** Connect `url` over Streamable HTTP, declaring form elicitation; later commands name it with `on(url)`. */
  connect(url: string): Promise<unknown> {
    return this.run(["connect", url, "--transport", "http", "--elicit", "form"]);
  }

  /** tools/call on connection `url`: the tool's result, or an `elicitationPending` question. */
  call(url: string, tool: string, args: Record<string, unknown>, options: { task?: boolean } = {}): Promise<any> {
    return this.run(["--connection", url, "tools/call", tool, JSON.stringify(args), ...(options.task ? ["--task"] : [])]);
  }

  /** Answer the pending question `elicitationId` with `content`: the call's result, or the next question. */
  respond(url: string, elicitationId: string, content: Record<string, unknown>): Promise<any> {
    return this.run(["--connection", url, "elicitation/respond", elicitationId, JSON.stringify(content)]);
  }

  async stop(): Promise<void> {
    await this.run(["daemon", "stop"]).catch(() => undefined);
    rmSync(this.home, { recursive: true, force: true });
  }
}

/** What a question or a result says, without the ids and clocks that differ from run to run. */
export function comparable(output: any): unknown {
  if (output?.elicitationPending) {
    const { message, mode, requestedSchema, toolName } = output.elicitationPending;
    return { question: { message, mode, requestedSchema, toolName } };
  }
  const { _meta: _related, ...result } = output ?? {};
  return result;
}
