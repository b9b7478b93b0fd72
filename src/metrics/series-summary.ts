import { Summary } from 'prom-client';
import { HeldSeries, type Labels } from './held-series.js';

/** The sliding window of every series' quantiles. */
export interface SummaryWindow {
  readonly percentiles: readonly number[];
  readonly maxAgeSeconds: number;
  readonly ageBuckets: number;
}

type Value = { value: number; labels: Partial<Record<string, string | number>>; metricName?: string };

/** One series of a SeriesSummary; `observe` adds an observation. */
export interface SummarySeries {
  observe(value: number): void;
}

/**
 * A summary family (quantiles over a sliding window, `_sum`, `_count`) whose series are added and
 * removed explicitly, as Triton's MetricModelReporter adds a model version's series when it loads
 * (count 0) and removes them when it unloads (core src/metric_model_reporter.cc, InitializeSummaries
 * and ~MetricModelReporter). prom-client's Summary shows a labelled series only from its first
 * observation, so each series here is an unregistered, unlabelled prom-client Summary, which has its
 * series from the start; the family adds the labels when the registry reads it.
 * A series is counted by its holders (HeldSeries): a model version being reloaded adds the same labels
 * before the version it replaces removes them, and the series stays until both are gone.
 */
export class SeriesSummary {
  readonly name: string;
  readonly help: string;
  readonly type = 'summary';
  readonly #window: SummaryWindow;
  readonly #series = new HeldSeries<Summary>();

  constructor(name: string, help: string, window: SummaryWindow) {
    this.name = name;
    this.help = help;
    this.#window = window;
  }

  /** The series with these labels, made (count 0) if it is new; each add is undone by one `remove`. */
  add(labels: Labels): SummarySeries {
    const summary = this.#series.hold(labels, () => {
      const { percentiles, maxAgeSeconds, ageBuckets } = this.#window;
      return new Summary({ name: this.name, help: this.help, registers: [], percentiles: [...percentiles], maxAgeSeconds, ageBuckets });
    });
    return { observe: (value) => summary.observe(value) };
  }

  /** One holder of the series with these labels is gone; the series leaves with the last. */
  remove(labels: Labels): void {
    this.#series.release(labels);
  }

  /** What the registry reads: prom-client's metric shape. */
  async get(): Promise<{ name: string; help: string; type: 'summary'; values: Value[]; aggregator: 'sum' }> {
    const values: Value[] = [];
    for (const { labels, value: summary } of this.#series.values()) {
      for (const value of (await summary.get()).values) {
        values.push({ ...value, labels: { ...labels, ...value.labels } });
      }
    }
    return { name: this.name, help: this.help, type: this.type, values, aggregator: 'sum' };
  }
}
