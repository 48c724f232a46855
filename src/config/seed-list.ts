/** `a:1, b:2,,c:3` → ["a:1", "b:2", "c:3"]: a comma-separated list of cluster seed nodes (the schema checks each). */
export function seedList(value: string): string[] {
  return value
    .split(",")
    .map((s) => s.trim())
    .filter((s) => s !== "");
}
