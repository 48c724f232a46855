/**
 * A port from text (a flag or an env var): digits only, so "8080abc" or "" is refused with the
 * name of its source instead of reaching the schema as a string. The range is the schema's job.
 */
export function parsePort(text: string, source: string, problems: string[]): number | undefined {
  if (/^\d+$/.test(text.trim())) return Number(text.trim());
  problems.push(`${source}: expected a port number, got "${text}"`);
  return undefined;
}
