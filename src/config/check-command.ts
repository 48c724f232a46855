import { formatProblems, loadConfig, type UpstreamConfigInput } from "./load.js";

export const CHECK_CONFIG_USAGE = "Usage:\n  taskgate check-config FILE [FILE...]";

type Out = { stdout(text: string): void; stderr(text: string): void };

/**
 * `taskgate check-config FILE...`: each file is read as `taskgate --config FILE` would read it
 * here (TASKGATE_* variables and `${VAR}` secrets included), and nothing starts. Exit status 0
 * when every file would start, 2 when one would not (every problem of every file listed) or on
 * bad arguments.
 */
export function checkConfigCommand(argv: string[], env: NodeJS.ProcessEnv, cwd: string, defaultUpstream: () => UpstreamConfigInput, out: Out): number {
  const files = argv.filter((a) => !a.startsWith("-"));
  const flags = argv.filter((a) => a.startsWith("-"));
  if (files.length === 0 || flags.length > 0) {
    out.stderr(`${flags.length > 0 ? `unknown flag ${flags[0]}\n` : "name a configuration file\n"}${CHECK_CONFIG_USAGE}\n`);
    return 2;
  }
  let failed = 0;
  for (const file of files) {
    const loaded = loadConfig({ argv: ["--config", file], env, cwd, defaultUpstream });
    if (loaded.ok) out.stdout(`${file}: ok\n`);
    else {
      failed++;
      out.stderr(`${file}: ${loaded.problems.length} problem${loaded.problems.length === 1 ? "" : "s"}:\n${formatProblems(loaded.problems)}\n`);
    }
  }
  return failed === 0 ? 0 : 2;
}
