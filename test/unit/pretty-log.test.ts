import { Writable } from "node:stream";
import { pino } from "pino";
import { describe, expect, it } from "vitest";
import { formatProblems, loadConfig } from "../../src/config/load.js";
import { chooseFormat, REDACTED_PATHS } from "../../src/observability/logger.js";
import { prettyDestination, prettyLine } from "../../src/observability/pretty-log.js";

/** What a logger writing through the pretty destination prints, line by line. */
function prettyLines(log: (logger: pino.Logger) => void): string[] {
  const chunks: string[] = [];
  const sink = new Writable({
    write(chunk, _enc, done) {
      chunks.push(String(chunk));
      done();
    },
  });
  const logger = pino(
    { base: { service: "taskgate" }, formatters: { level: (label) => ({ level: label }) }, redact: { paths: REDACTED_PATHS, censor: "[redacted]" } },
    prettyDestination(sink, { colour: false }),
  );
  log(logger);
  return chunks.join("").split("\n").filter(Boolean);
}

describe("log lines for a terminal", () => {
  it("writes one line per event: time, level, message, then the fields", () => {
    const lines = prettyLines((logger) => {
      logger.info({ taskId: "01ABC", upstream: "default", tool: "deploy", taskProtocol: "extension" }, "task created");
      logger.warn({ reason: "no store answer", headers: { authorization: "Bearer x" } }, "not ready");
      logger.error({ err: new Error("spawn ENOENT\n    at somewhere") }, "upstream failed");
    });
    expect(lines).toHaveLength(3);
    expect(lines[0]).toMatch(/^\d\d:\d\d:\d\d\.\d{3} INFO {2}task created taskId=01ABC upstream=default tool=deploy taskProtocol=extension$/);
    expect(lines[1]).toMatch(/ WARN {2}not ready reason="no store answer" headers=\[redacted\]$/);
    expect(lines[2]).toMatch(/ ERROR upstream failed err="spawn ENOENT\\n {4}at somewhere"$/);
    expect(lines.join("\n")).not.toContain("service=");
  });

  it("passes a line that is not JSON through, and colours the level only when asked", () => {
    expect(prettyLine("plain text", { colour: false })).toBe("plain text\n");
    const coloured = prettyLine(JSON.stringify({ level: "warn", time: 0, msg: "m" }), { colour: true });
    expect(coloured).toBe("00:00:00.000 \u001b[33mWARN \u001b[0m m\n");
  });

  it("is chosen by the terminal under auto, and forced by json or pretty", () => {
    expect(chooseFormat("auto", true)).toBe("pretty");
    expect(chooseFormat("auto", false)).toBe("json");
    expect(chooseFormat("json", true)).toBe("json");
    expect(chooseFormat("pretty", false)).toBe("pretty");
  });

  it("is set by log.format or TASKGATE_LOG_FORMAT, auto by default", () => {
    const load = (env: NodeJS.ProcessEnv) => {
      const result = loadConfig({ argv: [], env, cwd: process.cwd(), defaultUpstream: () => ({ stdio: { command: "node" } }) });
      if (!result.ok) throw new Error(formatProblems(result.problems));
      return result.config.log;
    };
    expect(load({}).format).toBe("auto");
    expect(load({ TASKGATE_LOG_FORMAT: "json", TASKGATE_LOG_LEVEL: "debug" })).toEqual({ level: "debug", format: "json" });
    const bad = loadConfig({ argv: [], env: { TASKGATE_LOG_FORMAT: "fancy" }, cwd: process.cwd(), defaultUpstream: () => ({ stdio: { command: "node" } }) });
    expect(bad.ok).toBe(false);
  });
});
