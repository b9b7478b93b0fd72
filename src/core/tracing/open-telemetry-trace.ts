import type { Context, Span } from '@opentelemetry/api';
import type { RequestTrace, TraceTimestampName } from '../../kernel/request-trace.js';
import type { TraceLevel } from '../../kernel/trace-settings.js';
import type { OpenTelemetryTracer } from './open-telemetry-tracer.js';

/**
 * A request's top-level span, `InferRequest`, shared by its trace and the child traces. It opens at
 * the first thing recorded, since the front end's first timestamp (HTTP_RECV_START) precedes sampling.
 */
export class RootSpan {
  readonly #tracer: OpenTelemetryTracer;
  readonly #remoteParent: Context | undefined;
  #span: Span | undefined;

  constructor(tracer: OpenTelemetryTracer, remoteParent: Context | undefined) {
    this.#tracer = tracer;
    this.#remoteParent = remoteParent;
  }

  /** The span, opened at `ns` if nothing opened it before. */
  at(ns: bigint): Span {
    return (this.#span ??= this.#tracer.startSpan('InferRequest', ns, this.#remoteParent));
  }
}

export interface OpenTelemetryTraceOptions {
  /** Triton's trace id (`triton.trace_id`), unique among the server's traces. */
  readonly id: number;
  readonly level: TraceLevel;
  readonly tracer: OpenTelemetryTracer;
  /** The request's top-level span; shared with the child traces, ended by the trace that started it. */
  readonly root: RootSpan;
  /** The trace of the request that made this one (an ensemble's, a calling model's). */
  readonly parent?: OpenTelemetryTrace;
  readonly spawn: (parent: OpenTelemetryTrace) => RequestTrace;
}

/** The timestamps the core records, on the model's request span or its compute span (Triton's `GetSpanKeyForActivity`). */
const REQUEST_EVENTS = new Set<TraceTimestampName>(['REQUEST_START', 'QUEUE_START', 'REQUEST_END']);
const COMPUTE_EVENTS = new Set<TraceTimestampName>(['COMPUTE_START', 'COMPUTE_INPUT_END', 'COMPUTE_OUTPUT_START', 'COMPUTE_END']);

/**
 * One request's trace in OpenTelemetry mode, as Triton's server src/tracer.cc builds it:
 *
 *     InferRequest                 root: the front end's timestamps (HTTP_RECV_START ...) as events
 *     └── <model>                  request span: REQUEST_START, QUEUE_START, REQUEST_END events;
 *         ├── compute                triton.model_name, .model_version, .trace_id, .trace_parent_id, .request_id
 *         │                          COMPUTE_START, COMPUTE_INPUT_END, COMPUTE_OUTPUT_START, COMPUTE_END
 *         └── <step model>         a child trace (ensemble step, model-to-model call): its own request
 *             └── compute          and compute spans, under its parent's request span
 *
 * The request span starts at REQUEST_START but is opened once the model is known (setModel), since
 * the core learns which version serves the request after it records REQUEST_START.
 * Tensors are not recorded in this mode (Triton: "Tensor level tracing is not supported").
 */
export class OpenTelemetryTrace implements RequestTrace {
  readonly #options: OpenTelemetryTraceOptions;
  #model: { name: string; version: number; requestId: string } | undefined;
  #requestStartNs: bigint | undefined;
  #requestSpan: Span | undefined;
  #computeSpan: Span | undefined;
  #isEnded = false;

  constructor(options: OpenTelemetryTraceOptions) {
    this.#options = options;
  }

  get id(): number {
    return this.#options.id;
  }

  setModel(name: string, version: number, requestId: string): void {
    this.#model = { name, version, requestId };
    if (this.#requestStartNs !== undefined) this.#openRequestSpan();
  }

  timestamp(name: TraceTimestampName, ns: bigint = process.hrtime.bigint()): void {
    if (this.#isEnded || !this.#options.level.timestamps) return;
    const { tracer } = this.#options;
    if (name === 'REQUEST_START') {
      this.#requestStartNs = ns;
      if (this.#model !== undefined) this.#openRequestSpan();
      return;
    }
    if (REQUEST_EVENTS.has(name)) {
      const span = this.#openRequestSpan();
      span?.addEvent(name, tracer.timeOf(ns));
      if (name === 'REQUEST_END' && span !== undefined) {
        this.#closeCompute(ns);
        span.end(tracer.timeOf(ns));
        this.#requestSpan = undefined;
      }
      return;
    }
    if (COMPUTE_EVENTS.has(name)) {
      if (name === 'COMPUTE_START') {
        const request = this.#openRequestSpan();
        if (request === undefined) return;
        this.#computeSpan = tracer.startSpan('compute', ns, tracer.contextOf(request));
      }
      this.#computeSpan?.addEvent(name, tracer.timeOf(ns));
      if (name === 'COMPUTE_END') this.#closeCompute(ns);
      return;
    }
    // The front end's timestamps belong to the root span; a child trace has none, but the core's
    // INFER_RESPONSE_COMPLETE of a child goes on its own request span.
    const target = this.#options.parent === undefined ? this.#options.root.at(ns) : (this.#requestSpan ?? this.#options.root.at(ns));
    target.addEvent(name, tracer.timeOf(ns));
  }

  tensors(): void {}

  child(): RequestTrace {
    return this.#options.spawn(this);
  }

  /** The span a child trace's request span goes under: this trace's request span while it is open, else the root. */
  parentSpan(ns: bigint): Span {
    return this.#requestSpan ?? this.#options.root.at(ns);
  }

  end(): void {
    if (this.#isEnded) return;
    const now = process.hrtime.bigint();
    this.#closeCompute(now);
    this.#requestSpan?.end(this.#options.tracer.timeOf(now));
    this.#requestSpan = undefined;
    this.#isEnded = true;
    if (this.#options.parent === undefined) this.#options.root.at(now).end(this.#options.tracer.timeOf(now));
  }

  #openRequestSpan(): Span | undefined {
    if (this.#requestSpan !== undefined || this.#model === undefined) return this.#requestSpan;
    const { tracer, parent, id } = this.#options;
    const { name, version, requestId } = this.#model;
    const startNs = this.#requestStartNs ?? process.hrtime.bigint();
    const span = tracer.startSpan(name, startNs, tracer.contextOf(parent?.parentSpan(startNs) ?? this.#options.root.at(startNs)), {
      'triton.model_name': name,
      'triton.model_version': version,
      'triton.trace_id': id,
      'triton.trace_parent_id': parent?.id ?? 0,
      ...(requestId !== '' ? { 'triton.request_id': requestId } : {}),
    });
    span.addEvent('REQUEST_START', tracer.timeOf(startNs));
    this.#requestSpan = span;
    return span;
  }

  #closeCompute(ns: bigint): void {
    this.#computeSpan?.end(this.#options.tracer.timeOf(ns));
    this.#computeSpan = undefined;
  }
}
