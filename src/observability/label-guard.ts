/**
 * Bounds the values a label may take. Tool and method names come from clients: without a bound
 * any caller could create a new time series per request and exhaust the scraper. The first
 * `limit` distinct values of a label are kept; later ones are reported as "other".
 */
export class LabelGuard {
  private readonly seen = new Map<string, Set<string>>();

  constructor(private readonly limit: number) {}

  admit(label: string, value: string): string {
    let values = this.seen.get(label);
    if (!values) this.seen.set(label, (values = new Set()));
    if (values.has(value)) return value;
    if (values.size >= this.limit) return "other";
    values.add(value);
    return value;
  }
}
