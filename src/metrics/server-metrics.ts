import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import { CpuSampler } from './cpu-metrics.js';
import { CustomMetrics } from './custom-metrics.js';
import { HeldSeries } from './held-series.js';
import type { ModelId } from '../kernel/model-id.js';
import { FIRST_RESPONSE_FAMILY } from './model-metrics-config.js';
import { type Execution, FAILURE_REASONS, type ModelMetricSettings, type ModelStatistics, type StatisticsObserver } from './model-statistics.js';
import type { ResponseCacheStatistics } from './response-cache-statistics.js';
import { type HistogramSeries, SeriesHistogram } from './series-histogram.js';
import { SeriesSummary, type SummarySeries } from './series-summary.js';

/** `--metrics-config` settings, with Triton's defaults. */
export interface MetricsConfig {
  readonly counterLatencies: boolean;
  readonly summaryLatencies: boolean;
  /** Triton's nv_inference_first_response_histogram_ms, for decoupled models only. */
  readonly histogramLatencies: boolean;
  /** Quantiles of the latency summaries (Triton's summary_quantiles, error bounds dropped). */
  readonly summaryQuantiles: readonly number[];
}

export const DEFAULT_METRICS_CONFIG: MetricsConfig = {
  counterLatencies: true,
  summaryLatencies: false,
  histogramLatencies: false,
  summaryQuantiles: [0.5, 0.9, 0.95, 0.99, 0.999],
};

/** What the metrics read at each scrape: every loaded model version. */
export interface MetricsSource {
  models(): Iterable<{ readonly statistics: ModelStatistics; readonly pendingCount: number; readonly isResponseCacheEnabled?: boolean }>;
  /** The response cache's counters (`--cache-config`); absent: the server has no cache and no nv_cache_* metrics. */
  responseCache?(): ResponseCacheStatistics;
  /** Models with a version loaded. */
  loadedModelCount?(): number;
  /** The estimated memory of each loaded version, as `--model-memory-budget` counts it. */
  memoryEstimates?(): Iterable<{ readonly name: string; readonly namespace?: string; readonly version: number; readonly bytes: number }>;
}

/** The repository's loads and evictions, counted (issue 19). */
export interface ModelLoadEvents {
  onModelLoaded(model: ModelId, reason: string): void;
  onModelEvicted(model: ModelId): void;
}

export interface ServerMetricsOptions {
  readonly config: MetricsConfig;
  readonly source: MetricsSource;
  /** Sample CPU and memory every this many milliseconds (`--metrics-interval-ms`); 0: never. */
  readonly cpuIntervalMs: number;
}

/** A model version's labels; `namespace` only with `--model-namespacing` (Triton's MetricModelReporter), left out otherwise. */
const LABELS = ['model', 'version', 'namespace'] as const;
/** A model's labels, with its version's when given; the statistics' snapshots are models too. */
const labelsOf = (model: ModelId, version?: string): Record<string, string> => ({
  model: model.name,
  ...(version !== undefined ? { version } : {}),
  ...(model.namespace !== undefined ? { namespace: model.namespace } : {}),
});
type Summaries = Record<'request' | 'queue' | 'computeInput' | 'computeInfer' | 'computeOutput' | 'cacheHit' | 'cacheMiss', SeriesSummary>;
const BATCH_SIZE_BUCKETS = [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024];
/** Triton's buckets of nv_inference_first_response_histogram_ms, in milliseconds, where the model's model_metrics sets none. */
const FIRST_RESPONSE_BUCKETS_MS: readonly number[] = [100, 500, 2000, 5000];
/** Triton's cumulative durations are in whole microseconds. */
const us = (ns: number): number => Math.round(ns / 1000);

/**
 * The Prometheus metrics under Triton's names (docs/user_guide/metrics.md), labelled model and
 * version. Counters are read from each model's statistics at scrape time, so /metrics and the
 * statistics extension always agree; summaries and histograms observe each request as it happens.
 * Beyond Triton: nereid_inference_batch_size, the batch sizes actually executed.
 */
export class ServerMetrics {
  readonly registry = new Registry();
  /** The families models create (pb_utils.MetricFamily), on the same registry. */
  readonly customMetrics = new CustomMetrics(this.registry);
  readonly #options: ServerMetricsOptions;
  readonly #batchSize: Histogram<'model' | 'version' | 'namespace'>;
  readonly #summaries: Summaries | undefined;
  readonly #firstResponse: SeriesHistogram | undefined;
  /** Each loaded version's load time, by its labels, with how many loaded copies hold it (a reload adds before the old one goes). */
  readonly #loadSeconds = new HeldSeries<{ seconds: number }>();
  readonly #cpu = new CpuSampler();
  #timer: NodeJS.Timeout | undefined;
  /** Counts each load (by why it was loaded: startup, api, poll, on_demand) and each eviction. */
  readonly repositoryEvents: ModelLoadEvents;

  constructor(options: ServerMetricsOptions) {
    this.#options = options;
    const registers = [this.registry];
    const source = options.source;
    const counter = (name: string, help: string, read: (statistics: ReturnType<ModelStatistics['snapshot']>) => number): void => {
      new Counter({
        name,
        help,
        labelNames: LABELS,
        registers,
        collect() {
          this.reset();
          for (const { statistics } of source.models()) {
            const snapshot = statistics.snapshot();
            this.inc(labelsOf(snapshot, snapshot.version), read(snapshot));
          }
        },
      });
    };
    counter('nv_inference_request_success', 'Number of successful inference requests, all batch sizes', (s) => s.inferenceStats.success.count);
    new Counter({
      name: 'nv_inference_request_failure',
      help: 'Number of failed inference requests, all batch sizes, by reason',
      labelNames: [...LABELS, 'reason'],
      registers,
      collect() {
        this.reset();
        for (const { statistics } of source.models()) {
          const snapshot = statistics.snapshot();
          for (const reason of FAILURE_REASONS) {
            this.inc({ ...labelsOf(snapshot, snapshot.version), reason }, snapshot.failuresByReason[reason]);
          }
        }
      },
    });
    counter('nv_inference_count', 'Number of inferences performed (a request of batch size n counts n)', (s) => s.inferenceCount);
    counter('nv_inference_exec_count', 'Number of model executions performed (a batch counts once)', (s) => s.executionCount);
    new Gauge({
      name: 'nv_inference_pending_request_count',
      help: 'Instantaneous number of requests waiting in the scheduler, not yet executing',
      labelNames: LABELS,
      registers,
      collect() {
        this.reset();
        for (const { statistics, pendingCount } of source.models()) {
          const snapshot = statistics.snapshot();
          this.set(labelsOf(snapshot, snapshot.version), pendingCount);
        }
      },
    });
    const loadSeconds = this.#loadSeconds;
    new Gauge({
      // Triton's (core src/metrics.cc), always on: a version's series from its load until its unload.
      name: 'nv_model_load_duration_secs',
      help: 'Model load time in seconds',
      labelNames: LABELS,
      registers,
      collect() {
        this.reset();
        for (const { labels, value } of loadSeconds.values()) this.set(labels, value.seconds);
      },
    });
    if (options.config.counterLatencies) {
      counter('nv_inference_request_duration_us', 'Cumulative inference request duration in microseconds (successful requests)', (s) => us(s.inferenceStats.success.ns));
      counter('nv_inference_queue_duration_us', 'Cumulative inference queuing duration in microseconds', (s) => us(s.inferenceStats.queue.ns));
      counter('nv_inference_compute_input_duration_us', 'Cumulative compute input duration in microseconds', (s) => us(s.inferenceStats.computeInput.ns));
      counter('nv_inference_compute_infer_duration_us', 'Cumulative compute inference duration in microseconds', (s) => us(s.inferenceStats.computeInfer.ns));
      counter('nv_inference_compute_output_duration_us', 'Cumulative compute output duration in microseconds', (s) => us(s.inferenceStats.computeOutput.ns));
      if (source.responseCache !== undefined) this.#addCacheCounters();
    }
    if (options.config.summaryLatencies) this.#summaries = this.#addSummaries(options.config.summaryQuantiles);
    if (options.config.histogramLatencies) {
      // Triton's name and help text (core src/metrics.cc); its series are added per decoupled model version by `observerFor`.
      this.#firstResponse = new SeriesHistogram(FIRST_RESPONSE_FAMILY, 'Duration from request to first response in milliseconds');
      this.registry.registerMetric(this.#firstResponse as never);
    }
    if (source.responseCache !== undefined) this.#addCacheGauges(source.responseCache.bind(source));
    this.#batchSize = new Histogram({
      name: 'nereid_inference_batch_size',
      help: 'Batch sizes executed (inferences per model execution): what the batching settings actually do',
      labelNames: LABELS,
      registers,
      buckets: BATCH_SIZE_BUCKETS,
    });
    const loads = new Counter({
      name: 'nereid_model_loads_total',
      help: 'Models loaded, by why: startup, api (the repository API), poll (a folder changed) or on_demand (a request)',
      labelNames: ['model', 'namespace', 'reason'],
      registers,
    });
    const evictions = new Counter({
      name: 'nereid_model_evictions_total',
      help: 'Models loaded on demand that were unloaded to stay within --max-loaded-models or --model-memory-budget',
      labelNames: ['model', 'namespace'],
      registers,
    });
    this.repositoryEvents = {
      onModelLoaded: (model, reason) => loads.inc({ ...labelsOf(model), reason }),
      onModelEvicted: (model) => evictions.inc(labelsOf(model)),
    };
    new Gauge({
      name: 'nereid_loaded_models',
      help: 'Models with a version loaded, the count --max-loaded-models limits',
      registers,
      collect() {
        this.set(source.loadedModelCount?.() ?? 0);
      },
    });
    new Gauge({
      name: 'nereid_model_memory_bytes',
      help: 'Estimated memory of each loaded model version (file sizes and instances; see docs/architecture.md), as --model-memory-budget counts it',
      labelNames: LABELS,
      registers,
      collect() {
        this.reset();
        for (const estimate of source.memoryEstimates?.() ?? []) this.set(labelsOf(estimate, String(estimate.version)), estimate.bytes);
      },
    });
    if (options.cpuIntervalMs > 0) this.#startCpuMetrics();
  }

  /**
   * The latency summaries (`--metrics-config summary_latencies=true`), with Triton's names and help
   * texts (core src/metrics.cc). Their series are added per model version by `observerFor`.
   */
  #addSummaries(quantiles: readonly number[]): Summaries {
    const window = { percentiles: quantiles, maxAgeSeconds: 60, ageBuckets: 5 };
    const summary = (name: string, help: string): SeriesSummary => {
      const family = new SeriesSummary(name, help, window);
      // NOTE: prom-client types registerMetric for its own four classes; the registry reads only
      // `name` and `get`, which SeriesSummary has (as custom-metrics.ts's families do).
      this.registry.registerMetric(family as never);
      return family;
    };
    return {
      request: summary('nv_inference_request_summary_us', 'Summary of inference request duration in microseconds (includes cached requests)'),
      queue: summary('nv_inference_queue_summary_us', 'Summary of inference queuing duration in microseconds (includes cached requests)'),
      computeInput: summary('nv_inference_compute_input_summary_us', 'Cumulative compute input duration in microseconds (does not include cached requests)'),
      computeInfer: summary('nv_inference_compute_infer_summary_us', 'Cumulative compute inference duration in microseconds (does not include cached requests)'),
      computeOutput: summary('nv_inference_compute_output_summary_us', 'Cumulative inference compute output duration in microseconds (does not include cached requests)'),
      cacheHit: summary('nv_cache_hit_summary_per_model', 'Summary of cache hit counts/durations per model, in microseconds.'),
      cacheMiss: summary('nv_cache_miss_summary_per_model', 'Summary of cache miss counts/durations per model, in microseconds.'),
    };
  }

  /**
   * The per-model response cache counters, for the models whose requests go through the cache: the
   * statistics' cache_hit and cache_miss, with Triton's names and help texts (core src/metrics.cc).
   * Triton makes them only with counter latencies on and the model's cache on (core
   * src/metric_model_reporter.cc, InitializeCounters).
   */
  #addCacheCounters(): void {
    const registers = [this.registry];
    const source = this.#options.source;
    const perModel = (name: string, help: string, value: (stats: ReturnType<ModelStatistics['snapshot']>) => number): void => {
      new Counter({
        name,
        help,
        labelNames: LABELS,
        registers,
        collect() {
          this.reset();
          for (const { statistics, isResponseCacheEnabled } of source.models()) {
            if (isResponseCacheEnabled !== true) continue;
            const snapshot = statistics.snapshot();
            this.inc(labelsOf(snapshot, snapshot.version), value(snapshot));
          }
        },
      });
    };
    perModel('nv_cache_num_hits_per_model', 'Number of cache hits per model', (s) => s.inferenceStats.cacheHit.count);
    perModel('nv_cache_num_misses_per_model', 'Number of cache misses per model', (s) => s.inferenceStats.cacheMiss.count);
    perModel('nv_cache_hit_duration_per_model', 'Total cache hit duration per model, in microseconds', (s) => us(s.inferenceStats.cacheHit.ns));
    perModel('nv_cache_miss_duration_per_model', 'Total cache miss (insert+lookup) duration per model, in microseconds', (s) => us(s.inferenceStats.cacheMiss.ns));
  }

  /**
   * The whole cache's gauges (with Redis, those about lookups and insertions). Beyond Triton:
   * nereid_cache_insertion_failures, responses not stored.
   */
  #addCacheGauges(read: () => ResponseCacheStatistics): void {
    const registers = [this.registry];
    const gauge = (name: string, help: string, value: (stats: ResponseCacheStatistics) => number): void => {
      new Gauge({
        name,
        help,
        registers,
        collect() {
          this.set(value(read()));
        },
      });
    };
    gauge('nv_cache_num_lookups', 'Number of cache lookups in response cache', (c) => c.lookupCount);
    gauge('nv_cache_num_hits', 'Number of cache hits in response cache', (c) => c.hitCount);
    gauge('nv_cache_num_misses', 'Number of cache misses in response cache', (c) => c.missCount);
    gauge('nv_cache_lookup_duration', 'Total cache lookup duration (hit and miss), in microseconds', (c) => us(c.lookupNs));
    gauge('nv_cache_insertion_duration', 'Total cache insertion duration, in microseconds', (c) => us(c.insertionNs));
    // What the store holds: the local cache only (a Redis server keeps its own numbers).
    if (read().store !== undefined) {
      gauge('nv_cache_num_entries', 'Number of responses stored in response cache', (c) => c.store!.entryCount);
      gauge('nv_cache_num_evictions', 'Number of cache evictions in response cache', (c) => c.store!.evictionCount);
      gauge('nv_cache_util', 'Cache utilization [0.0 - 1.0]', (c) => c.store!.usedBytes / c.store!.sizeBytes);
    }
    new Counter({
      name: 'nereid_cache_insertion_failures',
      help: 'Responses not stored in the response cache: larger than the whole local cache, or refused by Redis (the requests were answered)',
      registers,
      collect() {
        this.reset();
        this.inc(read().insertionFailureCount);
      },
    });
  }

  #startCpuMetrics(): void {
    const registers = [this.registry];
    const utilization = new Gauge({ name: 'nv_cpu_utilization', help: 'CPU utilization rate [0.0 - 1.0]', registers });
    const total = new Gauge({ name: 'nv_cpu_memory_total_bytes', help: 'CPU total memory (RAM), in bytes', registers });
    const used = new Gauge({ name: 'nv_cpu_memory_used_bytes', help: 'CPU used memory (RAM), in bytes', registers });
    const update = async (): Promise<void> => {
      const sample = await this.#cpu.sample();
      if (sample === undefined) return;
      utilization.set(sample.utilization);
      total.set(sample.memoryTotalBytes);
      used.set(sample.memoryUsedBytes);
    };
    void update();
    this.#timer = setInterval(() => void update(), this.#options.cpuIntervalMs);
    this.#timer.unref();
  }

  /**
   * The observer for one model version's statistics. With summaries on, the version's series are
   * shown from now (count 0) until it unloads, as Triton's InitializeSummaries makes them: the request
   * summary only without the response cache, the cache hit and miss summaries only with it. With
   * histograms on, a decoupled version's first-response histogram likewise (InitializeHistograms),
   * observed in whole milliseconds as Triton's InferenceResponse::UpdateResponseMetrics divides them.
   */
  observerFor(model: ModelId, version: number, settings: ModelMetricSettings): StatisticsObserver {
    const { isResponseCacheEnabled, loadSeconds } = settings;
    const labels = labelsOf(model, String(version));
    // What close gives back, each once: a second close must not take another holder's series away.
    const releases: Array<() => void> = [];
    if (loadSeconds !== undefined) {
      // A reload of the same version shows the reload's time while both copies hold the series.
      this.#loadSeconds.hold(labels, () => ({ seconds: loadSeconds })).seconds = loadSeconds;
      releases.push(() => this.#loadSeconds.release(labels));
    }
    const firstResponseFamily = settings.isDecoupled ? this.#firstResponse : undefined;
    let firstResponse: HistogramSeries | undefined = firstResponseFamily?.add(labels, settings.firstResponseBucketsMs ?? FIRST_RESPONSE_BUCKETS_MS);
    if (firstResponseFamily !== undefined) releases.push(() => firstResponseFamily.remove(labels));
    const summaries = this.#summaries;
    const add = (family: SeriesSummary | undefined): SummarySeries | undefined => {
      if (family === undefined) return undefined;
      releases.push(() => family.remove(labels));
      return family.add(labels);
    };
    const request = isResponseCacheEnabled ? undefined : add(summaries?.request);
    const queue = add(summaries?.queue);
    const computeInput = add(summaries?.computeInput);
    const computeInfer = add(summaries?.computeInfer);
    const computeOutput = add(summaries?.computeOutput);
    const cacheHit = isResponseCacheEnabled ? add(summaries?.cacheHit) : undefined;
    const cacheMiss = isResponseCacheEnabled ? add(summaries?.cacheMiss) : undefined;
    return {
      onRequest: (isSuccess, durationNs) => {
        if (isSuccess) request?.observe(durationNs / 1000);
      },
      onExecution: ({ batchSize, queueNs, timing }: Execution) => {
        this.#batchSize.observe(labels, batchSize);
        if (queue === undefined) return;
        for (const ns of queueNs) {
          queue.observe(ns / 1000);
          computeInput?.observe(timing.inputNs / 1000);
          computeInfer?.observe(timing.inferNs / 1000);
          computeOutput?.observe(timing.outputNs / 1000);
        }
      },
      // A hit's queue time is 0: the lookup is the first thing the model does (recordCacheHit).
      onCacheHit: (lookupNs) => {
        queue?.observe(0);
        cacheHit?.observe(lookupNs / 1000);
      },
      onCacheMiss: (missNs) => cacheMiss?.observe(missNs / 1000),
      onFirstResponse: (durationNs) => firstResponse?.observe(Math.floor(durationNs / 1e6)),
      close: () => {
        for (const release of releases.splice(0)) release();
        firstResponse = undefined;
      },
    };
  }

  /**
   * The Prometheus text exposition of every family that has a series. prometheus-cpp, Triton's
   * serializer, leaves out a family with none (core/src/family.cc, Family::Collect returns nothing for
   * it), and Triton's QA asserts the absence of the families a setting turns off
   * (qa/L0_metrics/metrics_config_test.py); prom-client would print their HELP and TYPE lines.
   */
  async text(): Promise<string> {
    const families = await Promise.all(this.registry.getMetricsAsArray().map((metric) => this.registry.getSingleMetricAsString(metric.name)));
    const shown = families.filter((family) => family.split('\n').some((line) => !line.startsWith('#')));
    return `${shown.join('\n\n')}\n`;
  }

  close(): void {
    if (this.#timer !== undefined) clearInterval(this.#timer);
  }
}
