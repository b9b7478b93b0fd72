import { HeldSeries, type Labels } from './held-series.js';

type Value = { value: number; labels: Record<string, string | number>; metricName: string };

/** One series of a SeriesHistogram; `observe` adds an observation. */
export interface HistogramSeries {
  observe(value: number): void;
}

interface Series {
  /** Upper bounds, ascending, without +Inf. */
  readonly bounds: readonly number[];
  /** Observations per bound (not cumulative); the last entry counts those above every bound. */
  readonly counts: number[];
  sum: number;
}

/**
 * A histogram family whose series are added and removed explicitly, each with buckets of its own, as
 * Triton's MetricModelReporter makes a model version's histogram at its load with the buckets of its
 * `model_metrics` (core src/metric_model_reporter.cc, InitializeHistograms) and removes it at its
 * unload. Written as prometheus-cpp writes a histogram (its text serializer): `_count`, `_sum`, then
 * each `_bucket` with `le` after the series' labels, cumulative, ending with `+Inf`; Triton's QA finds
 * bucket lines by that exact text (qa/L0_metrics/histogram_metrics_test.py).
 * NOTE: our own rather than prom-client's Histogram, which writes `le` first, takes one set of buckets
 * for a whole family, and counts an observation into bounds below it once a bound is negative (buckets
 * [-1, 0, 1, 2.5] and an observation of 2 gave le="-1" a count of 1), where Triton accepts any bounds.
 * A series is counted by its holders (HeldSeries), as SeriesSummary's are.
 */
export class SeriesHistogram {
  readonly name: string;
  readonly help: string;
  readonly type = 'histogram';
  readonly #series = new HeldSeries<Series>();

  constructor(name: string, help: string) {
    this.name = name;
    this.help = help;
  }

  /** The series with these labels, made (count 0) with `buckets` if it is new; each add is undone by one `remove`. */
  add(labels: Labels, buckets: readonly number[]): HistogramSeries {
    const series = this.#series.hold(labels, () => {
      const bounds = [...new Set(buckets)].filter((bound) => bound !== Number.POSITIVE_INFINITY).sort((a, b) => a - b);
      return { bounds, counts: new Array<number>(bounds.length + 1).fill(0), sum: 0 };
    });
    return {
      observe: (value) => {
        let index = 0;
        while (index < series.bounds.length && value > series.bounds[index]!) index++;
        series.counts[index]!++;
        series.sum += value;
      },
    };
  }

  /** One holder of the series with these labels is gone; the series leaves with the last. */
  remove(labels: Labels): void {
    this.#series.release(labels);
  }

  /** What the registry reads: prom-client's metric shape. */
  async get(): Promise<{ name: string; help: string; type: 'histogram'; values: Value[]; aggregator: 'sum' }> {
    const values: Value[] = [];
    for (const { labels, value: { bounds, counts, sum } } of this.#series.values()) {
      const count = counts.reduce((total, observations) => total + observations, 0);
      values.push({ metricName: `${this.name}_count`, labels: { ...labels }, value: count });
      values.push({ metricName: `${this.name}_sum`, labels: { ...labels }, value: sum });
      let cumulative = 0;
      bounds.forEach((bound, index) => {
        cumulative += counts[index]!;
        values.push({ metricName: `${this.name}_bucket`, labels: { ...labels, le: bound }, value: cumulative });
      });
      values.push({ metricName: `${this.name}_bucket`, labels: { ...labels, le: '+Inf' }, value: count });
    }
    return { name: this.name, help: this.help, type: this.type, values, aggregator: 'sum' };
  }
}
