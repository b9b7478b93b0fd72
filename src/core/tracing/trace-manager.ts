import { writeFile } from 'node:fs/promises';
import type { Logger } from '../../logging/logger.js';
import type { RequestTrace } from '../../kernel/request-trace.js';
import { type TraceSettings, type TraceSettingsUpdate, isTraceLevelOff } from '../../kernel/trace-settings.js';
import { TritonTrace } from './triton-trace.js';
import { OpenTelemetryTrace, RootSpan } from './open-telemetry-trace.js';
import type { OpenTelemetryTracer, TraceContextCarrier } from './open-telemetry-tracer.js';

/** Where sampling stands for one settings object: the server's, or a model's that overrides any of them. */
interface Sampler {
  /** Requests seen since the rate or the count last changed. */
  seen: number;
  /** Traces still to collect; -1 for no limit. */
  remaining: number;
}

export interface TraceManagerOptions {
  /** The settings given at start-up (`--trace-config`): the server's, and what `null` resets it to. */
  readonly initial: TraceSettings;
  readonly logger: Logger;
  /** The most bytes of traces kept in memory before they are written; past it, traces are dropped (default 64 MiB). */
  readonly maxCollectedBytes?: number;
  /** The OpenTelemetry mode: traces become spans on this tracer instead of records in the trace file. */
  readonly openTelemetry?: OpenTelemetryTracer;
}

const DEFAULT_MAX_COLLECTED_BYTES = 64 * 2 ** 20;

/**
 * Triton's trace manager (server src/tracer.cc `TraceManager`): the server's settings and each
 * model's overrides, the sampling (one request in `rate`, at most `count` traces), and where traces
 * go: in Triton mode the trace file in Triton's JSON layout (docs/user_guide/trace.md), in
 * OpenTelemetry mode spans on the tracer (open-telemetry-trace.ts), exported by its batch processor.
 *
 *     settings(model) = { ...server, ...overrides(model) }      sampler: the model's when it overrides any
 *
 * Completed traces wait in memory until `log_frequency` of them are collected (written to
 * `<file>.<n>`, n = 0, 1, ...) or, with log_frequency 0, until shutdown (written to `<file>`).
 */
export class TraceManager {
  readonly #options: TraceManagerOptions;
  #server: TraceSettings;
  readonly #overrides = new Map<string, TraceSettingsUpdate>();
  readonly #samplers = new Map<string, Sampler>();
  #nextId = 1;
  #collected: string[][] = [];
  #collectedBytes = 0;
  #isDropping = false;
  #fileIndex = 0;
  #writes: Promise<void> = Promise.resolve();

  constructor(options: TraceManagerOptions) {
    this.#options = options;
    this.#server = options.initial;
    this.#samplers.set('', { seen: 0, remaining: options.initial.count });
  }

  /** The settings a model's requests are traced with (the server's when `model` is undefined), the count as what remains. */
  settings(model?: string): TraceSettings {
    const settings = this.#effective(model);
    return { ...settings, count: this.#sampler(model).remaining };
  }

  /** Applies a change to the server's settings, or to one model's overrides (null clears an override). */
  update(model: string | undefined, update: TraceSettingsUpdate): void {
    if (model === undefined) {
      const initial = this.#options.initial;
      const next = { ...this.#server };
      for (const key of Object.keys(update) as Array<keyof TraceSettings>) {
        (next as Record<string, unknown>)[key] = update[key] === null ? initial[key] : update[key];
      }
      this.#server = next;
      if ('count' in update || 'rate' in update) {
        this.#samplers.set('', { seen: 0, remaining: next.count });
        // Models that follow the server's count start over with it.
        for (const [name, overrides] of this.#overrides) {
          if (overrides.count === undefined) this.#samplers.set(name, { seen: 0, remaining: next.count });
        }
      }
      return;
    }
    const overrides: Record<string, unknown> = { ...this.#overrides.get(model) };
    for (const key of Object.keys(update) as Array<keyof TraceSettings>) {
      if (update[key] === null) delete overrides[key];
      else overrides[key] = update[key];
    }
    if (Object.keys(overrides).length === 0) {
      this.#overrides.delete(model);
      this.#samplers.delete(model);
      return;
    }
    const hadSampler = this.#samplers.has(model);
    this.#overrides.set(model, overrides as TraceSettingsUpdate);
    if (!hadSampler || 'count' in update || 'rate' in update) {
      const count = (overrides.count as number | undefined) ?? this.#sampler(undefined).remaining;
      this.#samplers.set(model, { seen: 0, remaining: count });
    }
  }

  /**
   * A trace for this request when it is sampled; undefined otherwise (most requests: one map lookup
   * and a counter). In OpenTelemetry mode a request that carries a valid W3C `traceparent` is always
   * traced, under that remote parent, whatever the rate and count (Triton's context propagation:
   * `rate=0` then traces only those).
   */
  sample(model: string, carrier?: TraceContextCarrier): RequestTrace | undefined {
    const settings = this.#effective(model);
    if (isTraceLevelOff(settings.level)) return undefined;
    const { openTelemetry } = this.#options;
    if (openTelemetry !== undefined && carrier?.traceparent !== undefined) {
      const remote = openTelemetry.extract(carrier);
      if (remote !== undefined) return this.#createSpans(openTelemetry, settings, new RootSpan(openTelemetry, remote));
    }
    if (settings.rate === 0) return undefined;
    const sampler = this.#sampler(model);
    if (sampler.remaining === 0) return undefined;
    sampler.seen++;
    if (sampler.seen % settings.rate !== 0) return undefined;
    if (sampler.remaining > 0) sampler.remaining--;
    if (openTelemetry !== undefined) return this.#createSpans(openTelemetry, settings, new RootSpan(openTelemetry, undefined));
    return this.#create(settings, undefined);
  }

  /** Writes what is still in memory, or exports the spans still queued (at shutdown). */
  async flush(): Promise<void> {
    if (this.#options.openTelemetry !== undefined) return this.#options.openTelemetry.shutdown();
    const settings = this.#server;
    if (settings.logFrequency === 0) this.#write(settings.file, this.#collected.splice(0));
    else if (this.#collected.length > 0) this.#write(`${settings.file}.${this.#fileIndex++}`, this.#collected.splice(0));
    await this.#writes;
  }

  #effective(model: string | undefined): TraceSettings {
    const overrides = model === undefined ? undefined : this.#overrides.get(model);
    return overrides === undefined ? this.#server : ({ ...this.#server, ...overrides } as TraceSettings);
  }

  #sampler(model: string | undefined): Sampler {
    return (model !== undefined ? this.#samplers.get(model) : undefined) ?? this.#samplers.get('')!;
  }

  #create(settings: TraceSettings, parentId: number | undefined): TritonTrace {
    return new TritonTrace({
      id: this.#nextId++,
      ...(parentId !== undefined ? { parentId } : {}),
      level: settings.level,
      spawn: (parent) => this.#create(settings, parent),
      complete: (records) => this.#complete(settings, records),
    });
  }

  #createSpans(tracer: OpenTelemetryTracer, settings: TraceSettings, root: RootSpan, parent?: OpenTelemetryTrace): OpenTelemetryTrace {
    return new OpenTelemetryTrace({
      id: this.#nextId++,
      level: settings.level,
      tracer,
      root,
      ...(parent !== undefined ? { parent } : {}),
      spawn: (from) => this.#createSpans(tracer, settings, root, from),
    });
  }

  #complete(settings: TraceSettings, records: string[]): void {
    const bytes = records.reduce((sum, record) => sum + record.length, 0);
    // NOTE: with log_frequency 0 traces wait for shutdown; a client that turns tracing on for every
    // request must not be able to fill the memory, so past the bound further traces are dropped.
    if (this.#collectedBytes + bytes > (this.#options.maxCollectedBytes ?? DEFAULT_MAX_COLLECTED_BYTES)) {
      if (!this.#isDropping) {
        this.#options.logger.warning(
          'trace',
          `${this.#collected.length} traces (${this.#collectedBytes} bytes) wait to be written; further traces are dropped until they are (set --trace-config triton,log-frequency=N to write them as they come)`,
        );
      }
      this.#isDropping = true;
      return;
    }
    this.#collected.push(records);
    this.#collectedBytes += bytes;
    const frequency = this.#server.logFrequency;
    if (frequency > 0 && this.#collected.length >= frequency) {
      this.#write(`${settings.file}.${this.#fileIndex++}`, this.#collected.splice(0));
    }
  }

  #write(file: string, traces: string[][]): void {
    this.#collectedBytes = 0;
    this.#isDropping = false;
    if (file === '' || traces.length === 0) return;
    const text = `[${traces.flat().join(',')}]\n`;
    this.#writes = this.#writes.then(() =>
      writeFile(file, text).catch((error: Error) => this.#options.logger.error('trace', `cannot write the trace file '${file}': ${error.message}`)),
    );
  }
}
