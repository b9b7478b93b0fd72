import type { Registry } from 'prom-client';
import type { InferenceServer } from '../../core/index.js';
import type { ModelStatistics } from '../../protocol/statistics.js';
import { indexEntryMessage } from '../http/handlers/repository.js';
import type { ControlMode, DashboardFrame, LatencyQuantilesUs } from './dashboard-frame.js';
import { type MetricsExtras, modelTraffic } from './model-traffic.js';

export interface DashboardSources {
  readonly server: Pick<InferenceServer, 'modelStatistics' | 'repositoryIndex'>;
  readonly controlMode: ControlMode;
  /** The Prometheus registry, for latency quantiles and failure reasons; undefined with metrics off. */
  readonly metricsRegistry?: Registry;
}

type MetricValue = { readonly labels: Readonly<Record<string, string | number>>; readonly value: number };

async function metricValues(registry: Registry | undefined, name: string): Promise<readonly MetricValue[]> {
  const metric = registry?.getSingleMetric(name);
  return metric === undefined ? [] : ((await metric.get()).values as MetricValue[]);
}

/** A model version's key: its name, version and namespace (`--model-namespacing`), which tell two models of one name apart. */
const keyOf = (name: string, version: string, namespace: string | undefined): string => `${name}\u0000${version}\u0000${namespace ?? ''}`;

/** The quantiles and failure reasons of every model version the metrics have, by name and version. */
async function readMetricsExtras(registry: Registry | undefined): Promise<Map<string, MetricsExtras>> {
  const extras = new Map<string, { quantilesUs?: Record<keyof LatencyQuantilesUs, number | undefined>; failuresByReason?: Record<string, number> }>();
  const entryOf = (labels: MetricValue['labels']): NonNullable<ReturnType<typeof extras.get>> => {
    const key = keyOf(String(labels.model), String(labels.version), labels.namespace === undefined ? undefined : String(labels.namespace));
    let entry = extras.get(key);
    if (entry === undefined) extras.set(key, (entry = {}));
    return entry;
  };
  const [summaries, failures] = await Promise.all([metricValues(registry, 'nv_inference_request_summary_us'), metricValues(registry, 'nv_inference_request_failure')]);
  const QUANTILES: Readonly<Record<string, keyof LatencyQuantilesUs>> = { '0.5': 'p50', '0.9': 'p90', '0.99': 'p99' };
  for (const { labels, value } of summaries) {
    const field = labels.quantile === undefined ? undefined : QUANTILES[String(labels.quantile)];
    if (field === undefined) continue;
    const entry = entryOf(labels);
    entry.quantilesUs ??= { p50: undefined, p90: undefined, p99: undefined };
    entry.quantilesUs[field] = Number.isFinite(value) ? value : undefined;
  }
  for (const { labels, value } of failures) {
    const entry = entryOf(labels);
    (entry.failuresByReason ??= {})[String(labels.reason)] = value;
  }
  return extras;
}

/**
 * Builds one stream's frames: each frame's rates are over the time since the same stream's previous
 * frame, so every open page gets its own consistent intervals and a closed one leaves nothing behind.
 */
export class DashboardSampler {
  readonly #sources: DashboardSources;
  #previous = new Map<string, ModelStatistics>();
  #previousAtMs: number | undefined;
  #previousCpu: NodeJS.CpuUsage | undefined;

  constructor(sources: DashboardSources) {
    this.#sources = sources;
  }

  async frame(): Promise<DashboardFrame> {
    const { server, controlMode, metricsRegistry } = this.#sources;
    const extras = await readMetricsExtras(metricsRegistry);
    const atMs = performance.now();
    const cpu = process.cpuUsage();
    const intervalMs = this.#previousAtMs === undefined ? 0 : atMs - this.#previousAtMs;
    const statistics = server.modelStatistics();
    const current = new Map(statistics.map((stats) => [keyOf(stats.name, stats.version, stats.namespace), stats]));
    const index = server.repositoryIndex();
    const cpuUs = this.#previousCpu === undefined ? 0 : cpu.user + cpu.system - this.#previousCpu.user - this.#previousCpu.system;
    const frame: DashboardFrame = {
      timeMs: Date.now(),
      intervalMs,
      controlMode,
      server: {
        uptimeS: process.uptime(),
        cpuCores: intervalMs > 0 ? cpuUs / 1000 / intervalMs : 0,
        residentBytes: process.memoryUsage.rss(),
        // Models with a version READY: those the statistics list, a model of one name in two namespaces twice.
        loadedModelCount: new Set(statistics.map((stats) => keyOf(stats.name, '', stats.namespace))).size,
      },
      models: index.map(indexEntryMessage),
      traffic: statistics.map((stats) => {
        const key = keyOf(stats.name, stats.version, stats.namespace);
        return modelTraffic(this.#previous.get(key), stats, intervalMs, extras.get(key));
      }),
    };
    this.#previous = current;
    this.#previousAtMs = atMs;
    this.#previousCpu = cpu;
    return frame;
  }
}
