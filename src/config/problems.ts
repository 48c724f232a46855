import type { z } from "zod";

/**
 * zod issues → `path.to.key: message` lines, one per issue, so an operator fixes every
 * mistake in one round. An unknown key is named by its own path, where it has to be removed.
 */
export function issuesToProblems(issues: readonly z.core.$ZodIssue[]): string[] {
  return issues.flatMap((issue) => {
    if (issue.code === "unrecognized_keys") {
      return issue.keys.map((key) => `${joinPath([...issue.path, key])}: unknown key`);
    }
    return [`${joinPath(issue.path)}: ${issue.message}`];
  });
}

function joinPath(path: readonly PropertyKey[]): string {
  return path.length === 0 ? "(top level)" : path.map(String).join(".");
}

/** The problems as an indented list, one per line, for the CLI to print under its own heading. */
export function formatProblems(problems: readonly string[]): string {
  return problems.map((p) => `  - ${p}`).join("\n");
}
