const COLUMNS = ["taskId", "status", "upstream", "tool", "createdAt", "statusMessage"] as const;
const HEADERS = ["TASK", "STATUS", "UPSTREAM", "TOOL", "CREATED", "MESSAGE"];

/** `taskgate tasks list` as a plain aligned table, with the next page's cursor when there is one. */
export function formatTaskTable(tasks: Array<Record<string, unknown>>, nextCursor?: string): string {
  const rows = [HEADERS, ...tasks.map((t) => COLUMNS.map((c) => String(t[c] ?? "")))];
  const widths = HEADERS.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  const lines = rows.map((r) =>
    r
      .map((cell, i) => (i === r.length - 1 ? cell : cell.padEnd(widths[i]!)))
      .join("  ")
      .trimEnd(),
  );
  if (nextCursor) lines.push(`(more: --cursor ${nextCursor})`);
  return `${lines.join("\n")}\n`;
}
