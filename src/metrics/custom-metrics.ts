import type { Registry } from 'prom-client';
import { NereidError } from '../kernel/errors.js';

/** Triton's TRITONSERVER_MetricKind, in pb_utils.MetricFamily's order (COUNTER, GAUGE, HISTOGRAM). */
export type MetricKind = 'counter' | 'gauge' | 'histogram';
export const METRIC_KINDS: readonly MetricKind[] = ['counter', 'gauge', 'histogram'];

/** One labelled series of a family; shared by every Metric made with the same labels. */
interface Series {
  readonly labels: Readonly<Record<string, string>>;
  references: number;
  value: number;
  /** Histograms: the upper bounds, ascending, and the count of observations at or below each. */
  readonly buckets?: readonly number[];
  readonly bucketCounts?: number[];
  count: number;
}

/** A family as the Prometheus registry reads it (prom-client's metric shape: `name`, `type`, `get`). */
class Family {
  readonly name: string;
  readonly help: string;
  readonly type: MetricKind;
  references = 0;
  readonly series = new Map<string, Series>();

  constructor(name: string, help: string, type: MetricKind) {
    this.name = name;
    this.help = help;
    this.type = type;
  }

  get(): { name: string; help: string; type: MetricKind; values: Array<{ value: number; labels: Record<string, string | number>; metricName?: string }>; aggregator: string } {
    const values: Array<{ value: number; labels: Record<string, string | number>; metricName?: string }> = [];
    for (const series of this.series.values()) {
      if (this.type !== 'histogram') {
        values.push({ value: series.value, labels: { ...series.labels } });
        continue;
      }
      series.buckets!.forEach((bound, index) => {
        values.push({ metricName: `${this.name}_bucket`, value: series.bucketCounts![index]!, labels: { ...series.labels, le: bound } });
      });
      values.push({ metricName: `${this.name}_bucket`, value: series.count, labels: { ...series.labels, le: '+Inf' } });
      values.push({ metricName: `${this.name}_sum`, value: series.value, labels: { ...series.labels } });
      values.push({ metricName: `${this.name}_count`, value: series.count, labels: { ...series.labels } });
    }
    return { name: this.name, help: this.help, type: this.type, values, aggregator: 'sum' };
  }
}

const METRIC_NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*$/;

/**
 * Custom metrics that models create (Triton's TRITONSERVER_MetricFamily and TRITONSERVER_Metric,
 * `pb_utils.MetricFamily` in Python), on /metrics beside the server's own families. Each model
 * instance works in a scope of its own; closing the scope (the instance unloads, or its process
 * ends) removes what it made. Families are shared by name and series by labels, each kept while
 * some scope holds it, as Triton's are (core src/metric_family.cc: reference counts per series).
 * The rules and messages are Triton's (same file); unlike Triton, a family without holders leaves
 * /metrics rather than staying there empty.
 */
export class CustomMetrics {
  readonly #registry: Registry;
  readonly #families = new Map<string, Family>();

  constructor(registry: Registry) {
    this.#registry = registry;
  }

  /** A new scope: ids of the families and metrics it made, removed together by `close`. */
  scope(): CustomMetricScope {
    return new CustomMetricScope({
      acquireFamily: (name, help, kind) => this.#acquireFamily(name, help, kind),
      releaseFamily: (family) => {
        if (--family.references > 0) return;
        this.#families.delete(family.name);
        this.#registry.removeSingleMetric(family.name);
      },
    });
  }

  #acquireFamily(name: string, help: string, kind: MetricKind): Family {
    if (!METRIC_NAME.test(name)) throw new NereidError('INVALID_ARG', `invalid metric family name '${name}': a Prometheus metric name matches [a-zA-Z_:][a-zA-Z0-9_:]*`);
    let family = this.#families.get(name);
    if (family === undefined) {
      if (this.#registry.getSingleMetric(name) !== undefined) {
        throw new NereidError('ALREADY_EXISTS', `metric family '${name}' is one of the server's own metrics; choose another name`);
      }
      family = new Family(name, help, kind);
      this.#registry.registerMetric(family as never);
      this.#families.set(name, family);
    } else if (family.type !== kind) {
      throw new NereidError('INVALID_ARG', `Family name already exists with different type: metric family '${name}' is a ${family.type}, not a ${kind}`);
    }
    family.references++;
    return family;
  }
}

interface ScopeHooks {
  acquireFamily(name: string, help: string, kind: MetricKind): Family;
  releaseFamily(family: Family): void;
}

/** The custom metrics of one model instance, named by ids it hands out (the Python objects hold them). */
export class CustomMetricScope {
  readonly #hooks: ScopeHooks;
  readonly #families = new Map<number, Family>();
  readonly #metrics = new Map<number, { readonly family: Family; readonly key: string; readonly series: Series }>();
  #nextId = 1;

  constructor(hooks: ScopeHooks) {
    this.#hooks = hooks;
  }

  createFamily(name: string, description: string, kind: MetricKind): number {
    const family = this.#hooks.acquireFamily(name, description, kind);
    const id = this.#nextId++;
    this.#families.set(id, family);
    return id;
  }

  createMetric(familyId: number, labels: Readonly<Record<string, string>>, buckets: readonly number[] | undefined): number {
    const family = this.#family(familyId);
    for (const [name, value] of Object.entries(labels)) {
      if (!LABEL_NAME.test(name)) throw new NereidError('INVALID_ARG', `invalid label name '${name}' for metric family '${family.name}': a Prometheus label name matches [a-zA-Z_][a-zA-Z0-9_]*`);
      if (typeof value !== 'string') throw new NereidError('INVALID_ARG', `Parameter [${name}] must have a type of TRITONSERVER_PARAMETER_STRING to be added as a label.`);
    }
    if (family.type === 'histogram') {
      if (buckets === undefined) throw new NereidError('INVALID_ARG', 'Bucket boundaries not found in Metric args.');
      if (buckets.some((bound, index) => !Number.isFinite(bound) || (index > 0 && bound <= buckets[index - 1]!))) {
        throw new NereidError('INVALID_ARG', `histogram buckets for metric family '${family.name}' must be finite numbers in increasing order, got [${buckets.join(', ')}]`);
      }
    } else if (buckets !== undefined) {
      throw new NereidError('INVALID_ARG', `Unexpected args found in ${family.type} Metric constructor.`);
    }
    const key = JSON.stringify(Object.entries(labels).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
    let series = family.series.get(key);
    if (series === undefined) {
      series = { labels: { ...labels }, references: 0, value: 0, count: 0, ...(buckets !== undefined ? { buckets: [...buckets], bucketCounts: buckets.map(() => 0) } : {}) };
      family.series.set(key, series);
    }
    series.references++;
    const id = this.#nextId++;
    this.#metrics.set(id, { family, key, series });
    return id;
  }

  increment(metricId: number, value: number): void {
    const { family, series } = this.#metric(metricId, 'increment');
    if (family.type === 'histogram') throw new NereidError('UNSUPPORTED', 'TRITONSERVER_METRIC_KIND_HISTOGRAM does not support Increment');
    if (family.type === 'counter' && value < 0) {
      throw new NereidError('INVALID_ARG', 'TRITONSERVER_METRIC_KIND_COUNTER can only be incremented monotonically by non-negative values.');
    }
    series.value += value;
  }

  set(metricId: number, value: number): void {
    const { family, series } = this.#metric(metricId, 'set');
    if (family.type !== 'gauge') throw new NereidError('UNSUPPORTED', `TRITONSERVER_METRIC_KIND_${family.type.toUpperCase()} does not support Set`);
    series.value = value;
  }

  observe(metricId: number, value: number): void {
    const { family, series } = this.#metric(metricId, 'set');
    if (family.type !== 'histogram') throw new NereidError('UNSUPPORTED', `TRITONSERVER_METRIC_KIND_${family.type.toUpperCase()} does not support Observe`);
    series.buckets!.forEach((bound, index) => {
      if (value <= bound) series.bucketCounts![index]!++;
    });
    series.count++;
    series.value += value;
  }

  value(metricId: number): number {
    const { family, series } = this.#metric(metricId, 'get');
    if (family.type === 'histogram') throw new NereidError('UNSUPPORTED', 'TRITONSERVER_METRIC_KIND_HISTOGRAM does not support Value');
    return series.value;
  }

  deleteMetric(metricId: number): void {
    const metric = this.#metrics.get(metricId);
    if (metric === undefined) return;
    this.#metrics.delete(metricId);
    if (--metric.series.references === 0) metric.family.series.delete(metric.key);
  }

  deleteFamily(familyId: number): void {
    const family = this.#families.get(familyId);
    if (family === undefined) return;
    // As in Triton, the family's Metric objects are invalidated with it.
    for (const [id, metric] of this.#metrics) if (metric.family === family) this.deleteMetric(id);
    this.#families.delete(familyId);
    this.#hooks.releaseFamily(family);
  }

  /** Removes every metric and family of the scope (the instance is gone). */
  close(): void {
    for (const id of [...this.#metrics.keys()]) this.deleteMetric(id);
    for (const id of [...this.#families.keys()]) this.deleteFamily(id);
  }

  #family(familyId: number): Family {
    const family = this.#families.get(familyId);
    if (family === undefined) throw new NereidError('INTERNAL', `metric family ${familyId} does not exist (it was deleted)`);
    return family;
  }

  #metric(metricId: number, verb: 'increment' | 'set' | 'get'): { family: Family; key: string; series: Series } {
    const metric = this.#metrics.get(metricId);
    if (metric === undefined) throw new NereidError('INTERNAL', `Could not ${verb} metric value. Metric has been invalidated.`);
    return metric;
  }
}
