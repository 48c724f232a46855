import type { Registry } from "prom-client";

/** One label set's counts; the caller keeps it and observes into it directly. */
export interface HistogramSeries<L extends string> {
  readonly labels: Readonly<Record<L, string>>;
  /** Per bucket, not cumulative; the last slot counts values above every bound. */
  readonly counts: Float64Array;
  sum: number;
  count: number;
}

/**
 * A Prometheus histogram for the per-request hot path, exported through a prom-client registry
 * like every other series. prom-client's own Histogram validates and hashes the whole label set
 * on every observation (about 3 µs for six labels); here the caller looks its series up once
 * and an observation is a bucket search and three additions. Same text exposition as prom-client.
 */
export class FastHistogram<L extends string> {
  readonly type = "histogram";
  private readonly series = new Map<string, HistogramSeries<L>>();

  constructor(
    readonly name: string,
    readonly help: string,
    readonly labelNames: readonly L[],
    private readonly buckets: readonly number[],
    registry: Registry,
  ) {
    registry.registerMetric(this as never);
  }

  /** The series of one label set, made on first use; `key` must name the label set uniquely. */
  seriesFor(key: string, labels: Record<L, string>): HistogramSeries<L> {
    let series = this.series.get(key);
    if (!series) this.series.set(key, (series = { labels, counts: new Float64Array(this.buckets.length + 1), sum: 0, count: 0 }));
    return series;
  }

  observe(series: HistogramSeries<L>, value: number): void {
    let i = 0;
    while (i < this.buckets.length && value > this.buckets[i]!) i++;
    series.counts[i]!++;
    series.sum += value;
    series.count++;
  }

  /** What prom-client's registry renders: cumulative buckets, then _sum and _count, per series. */
  async get() {
    const values: Array<{ labels: Record<string, string | number>; value: number; metricName: string }> = [];
    for (const { labels, counts, sum, count } of this.series.values()) {
      let cumulative = 0;
      this.buckets.forEach((le, i) => {
        cumulative += counts[i]!;
        values.push({ labels: { le, ...labels }, value: cumulative, metricName: `${this.name}_bucket` });
      });
      values.push({ labels: { le: "+Inf", ...labels }, value: count, metricName: `${this.name}_bucket` });
      values.push({ labels, value: sum, metricName: `${this.name}_sum` });
      values.push({ labels, value: count, metricName: `${this.name}_count` });
    }
    return { name: this.name, help: this.help, type: this.type, values, aggregator: "sum" as const };
  }

  reset(): void {
    this.series.clear();
  }
}
