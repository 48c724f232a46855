/** Reads one sample from Prometheus text exposition: the value of `name` whose labels include `labels`. */
export function sample(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  let total: number | undefined;
  for (const line of text.split("\n")) {
    const match = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})?\s+(\S+)$/.exec(line);
    if (!match || match[1] !== name) continue;
    const found = Object.fromEntries([...(match[2] ?? "").matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((m) => [m[1], m[2]]));
    if (Object.entries(labels).every(([k, v]) => found[k] === v)) total = (total ?? 0) + Number(match[3]);
  }
  return total;
}

export async function scrape(baseUrl: string): Promise<string> {
  const res = await fetch(`${baseUrl}/metrics`);
  if (!res.ok || !(res.headers.get("content-type") ?? "").startsWith("text/plain")) throw new Error(`GET /metrics: ${res.status}`);
  return res.text();
}
