import type { Attributes, Context, HrTime, Span } from '@opentelemetry/api';
import type { Logger } from '../../logging/logger.js';
import type { OpenTelemetrySettings } from '../../kernel/trace-settings.js';

/** The W3C trace context headers of an incoming request (HTTP headers, gRPC metadata), as given. */
export interface TraceContextCarrier {
  readonly traceparent?: string;
  readonly tracestate?: string;
}

/**
 * What a request's OpenTelemetry trace needs from the SDK, set up once at start-up: spans on the
 * `@opentelemetry/*` tracer, exported in batches over OTLP/HTTP (protobuf) to the configured URL.
 */
export interface OpenTelemetryTracer {
  /** The remote parent a W3C `traceparent` names; undefined when there is none or it is malformed. */
  extract(carrier: TraceContextCarrier): Context | undefined;
  /** Starts a SERVER span at `startNs` (process.hrtime.bigint()'s clock) under `parent` (a new trace when undefined). */
  startSpan(name: string, startNs: bigint, parent: Context | undefined, attributes?: Attributes): Span;
  /** The context whose current span is `span`, to start its children under. */
  contextOf(span: Span): Context;
  /** A monotonic timestamp as wall-clock time, for events and span ends. */
  timeOf(ns: bigint): HrTime;
  /**
   * Exports the spans still queued and stops the exporter (at shutdown); never rejects. Spans not
   * exported within SHUTDOWN_EXPORT_TIMEOUT_MS (a collector down or slow) are dropped with a warning.
   */
  shutdown(): Promise<void>;
}

/** Triton's default resource (server src/tracer.cc `InitTracer`); OTEL_RESOURCE_ATTRIBUTES and `resource=` override it. */
const DEFAULT_SERVICE_NAME = 'triton-inference-server';
const TRACER_NAME = 'triton-server';
/**
 * How long the spans still queued at shutdown may take to export. NOTE: the OTLP exporter retries a
 * collector that refuses or does not answer, with backoff, for up to its 10 s timeout: without a
 * bound, SIGTERM waited that long for spans nobody will receive. One export to a collector that is up
 * takes milliseconds.
 */
const SHUTDOWN_EXPORT_TIMEOUT_MS = 1000;

/**
 * Loads the OpenTelemetry packages (only in this mode: the Triton mode and tracing off never import
 * them) and builds the tracer: resource = service.name, then OTEL_RESOURCE_ATTRIBUTES, then each
 * `opentelemetry,resource=`; Triton's batch span processor with the `bsp_*` settings given (the
 * others from OTEL_BSP_* or the SDK's defaults); the OTLP/HTTP protobuf exporter to `url`.
 */
export async function loadOpenTelemetryTracer(settings: OpenTelemetrySettings, logger: Logger): Promise<OpenTelemetryTracer> {
  const [api, core, resources, sdk, otlp] = await Promise.all([
    import('@opentelemetry/api'),
    import('@opentelemetry/core'),
    import('@opentelemetry/resources'),
    import('@opentelemetry/sdk-trace-base'),
    import('@opentelemetry/exporter-trace-otlp-proto'),
  ]);
  // A receiver that is down fails each export; the SDK reports it here, once per batch.
  core.setGlobalErrorHandler((error) => logger.warning('trace', `OpenTelemetry export to ${settings.url} failed: ${error instanceof Error ? error.message : String(error)}`));
  const resource = resources
    .resourceFromAttributes({ 'service.name': DEFAULT_SERVICE_NAME })
    .merge(resources.detectResources({ detectors: [resources.envDetector] }))
    .merge(resources.resourceFromAttributes(settings.resource));
  const processor = new sdk.BatchSpanProcessor(new otlp.OTLPTraceExporter({ url: settings.url }), {
    ...(settings.bspMaxQueueSize !== undefined ? { maxQueueSize: settings.bspMaxQueueSize } : {}),
    ...(settings.bspScheduleDelayMs !== undefined ? { scheduledDelayMillis: settings.bspScheduleDelayMs } : {}),
    ...(settings.bspMaxExportBatchSize !== undefined ? { maxExportBatchSize: settings.bspMaxExportBatchSize } : {}),
  });
  const provider = new sdk.BasicTracerProvider({ resource, spanProcessors: [processor] });
  const tracer = provider.getTracer(TRACER_NAME);
  const propagator = new core.W3CTraceContextPropagator();
  logger.info('trace', `OpenTelemetry trace mode: spans are exported over OTLP/HTTP to ${settings.url}`);
  // NOTE: spans carry wall-clock times, the trace records monotonic ones: one offset between the two,
  // taken once, as Triton's `time_offset_` (its events use the system clock, docs/user_guide/trace.md).
  const epochOffsetNs = BigInt(Math.round((performance.timeOrigin + performance.now()) * 1e6)) - process.hrtime.bigint();
  const timeOf = (ns: bigint): HrTime => {
    const epochNs = ns + epochOffsetNs;
    return [Number(epochNs / 1_000_000_000n), Number(epochNs % 1_000_000_000n)];
  };
  return {
    extract(carrier) {
      if (carrier.traceparent === undefined) return undefined;
      const context = propagator.extract(api.ROOT_CONTEXT, carrier, api.defaultTextMapGetter);
      const remote = api.trace.getSpanContext(context);
      return remote !== undefined && api.isSpanContextValid(remote) ? context : undefined;
    },
    startSpan: (name, startNs, parent, attributes) =>
      tracer.startSpan(name, { kind: api.SpanKind.SERVER, startTime: timeOf(startNs), ...(attributes !== undefined ? { attributes } : {}) }, parent ?? api.ROOT_CONTEXT),
    contextOf: (span) => api.trace.setSpan(api.ROOT_CONTEXT, span),
    timeOf,
    shutdown: async () => {
      let timer: NodeJS.Timeout | undefined;
      const bound = new Promise<string>((resolve) => {
        timer = setTimeout(() => resolve(`the export did not finish within ${SHUTDOWN_EXPORT_TIMEOUT_MS} ms`), SHUTDOWN_EXPORT_TIMEOUT_MS);
      });
      const exported = provider.shutdown().then(
        () => undefined,
        (error: unknown) => (error instanceof Error ? error.message : String(error)),
      );
      const failure = await Promise.race([exported, bound]);
      clearTimeout(timer);
      if (failure !== undefined) logger.warning('trace', `OpenTelemetry: the spans still queued at shutdown were not exported to ${settings.url}: ${failure}`);
    },
  };
}
