import { NereidError } from '../kernel/errors.js';
import type { LoggerOptions } from '../logging/logger.js';
import { DEFAULT_METRICS_CONFIG, type MetricsConfig } from '../metrics/server-metrics.js';
import { type FlagSpec, parseFlags } from './parse-flags.js';
import type { RestrictedFeatures } from '../protocol/restricted-category.js';
import { parseRestrictedFeatures } from './restricted-features.js';
import { type TlsFiles, type TlsService, resolveTlsFiles } from './tls-flags.js';
import { TRITON_ONLY_FLAGS, checkTritonOnlyFlags } from './triton-flags.js';
import { parseTraceConfig } from './trace-config.js';
import { compileHeaderForwardPattern } from './header-forward-pattern.js';
import { type SageMakerSettings, parseSafePortRange, readSageMakerEnvironment } from './sagemaker-options.js';
import { type VertexAiSettings, readVertexAiEnvironment } from './vertex-ai-options.js';
import { DEFAULT_TRACE_SETTINGS, type OpenTelemetrySettings, type TraceSettings } from '../kernel/trace-settings.js';

/**
 * Triton's --model-control-mode: load everything at start (NONE), load and unload through the API
 * (EXPLICIT), or follow the repository's folders (POLL).
 */
export type ModelControlMode = 'none' | 'explicit' | 'poll';

/** Everything `nereid serve` can be told, with Triton's flag names and defaults (src/command_line_parser.cc). */
export interface ServerOptions {
  readonly modelRepositories: readonly string[];
  /** `--model-control-mode`: NONE loads everything at start; EXPLICIT loads and unloads through the API. */
  readonly modelControlMode: ModelControlMode;
  /** `--load-model` (EXPLICIT mode): models loaded at start; `*` for all. */
  readonly startupModels: readonly string[];
  /** `--repository-poll-secs` (POLL mode): how often the repositories are read again. */
  readonly repositoryPollMs: number;
  /** `--model-unload-timeout-secs`: how long an unload or reload waits for accepted requests. */
  readonly modelUnloadTimeoutMs: number;
  readonly isHttpAllowed: boolean;
  readonly httpPort: number;
  readonly httpAddress: string;
  readonly httpMaxInputBytes: number;
  /** `--allow-dashboard`: the live dashboard at `/dashboard` on the HTTP port (beyond Triton; default true). */
  readonly isDashboardAllowed: boolean;
  readonly isGrpcAllowed: boolean;
  readonly grpcPort: number;
  readonly grpcAddress: string;
  readonly grpcMaxMessageBytes: number;
  /** The most a compressed gRPC message may inflate to (`--grpc-max-decompressed-message-size`), bounded by grpcMaxMessageBytes too. */
  readonly grpcMaxDecompressedMessageBytes: number;
  readonly grpcKeepaliveTimeMs: number;
  readonly grpcKeepaliveTimeoutMs: number;
  readonly isGrpcKeepalivePermittedWithoutCalls: boolean;
  readonly grpcHttp2MaxPingStrikes: number;
  readonly grpcHttp2MinRecvPingIntervalWithoutDataMs: number;
  readonly isMetricsAllowed: boolean;
  readonly metricsPort: number;
  /** Undefined: the HTTP address, as in Triton. */
  readonly metricsAddress?: string;
  /** How often CPU and memory are sampled; with `isCpuMetricsAllowed` false they are not. */
  readonly metricsIntervalMs: number;
  readonly isCpuMetricsAllowed: boolean;
  readonly metricsConfig: MetricsConfig;
  readonly exitTimeoutMs: number;
  readonly isStrictReadiness: boolean;
  /**
   * `--allow-client-shm`: clients may register system shared memory regions and pass tensors in them
   * (Triton's flag, false by default since Triton 26.04: a region makes the server open and write a
   * POSIX shared memory object the client names).
   */
  readonly isClientShmAllowed: boolean;
  /** Exit at start-up when a model fails to load. Triton defaults to true; Nereid to false, so one broken model never takes the others down. */
  readonly isExitOnError: boolean;
  /** `--model-namespacing`: models of the same name in different repositories are served side by side (Triton's, default false). */
  readonly isModelNamespacing: boolean;
  readonly isAutoCompleteEnabled: boolean;
  readonly defaultMaxBatchSize: number;
  /** `--backend-config=onnxruntime,execution-thread-count=N`: threads the ONNX Runtime sessions share; 0: one per core. */
  readonly onnxExecutionThreadCount: number;
  readonly id: string;
  readonly log: LoggerOptions;
  // Issue 24, restricted APIs and token authentication:
  /** `--http-restricted-api`: the HTTP categories behind a header (Triton's). */
  readonly httpRestrictedApis: RestrictedFeatures;
  /** `--grpc-restricted-protocol`: the gRPC categories behind a `triton-grpc-protocol-` metadata key (Triton's). */
  readonly grpcRestrictedProtocols: RestrictedFeatures;
  /** `--http-header-forward-pattern` (Triton's): the HTTP headers that become request parameters. */
  readonly httpHeaderForwardPattern?: RegExp;
  /** `--grpc-header-forward-pattern` (Triton's): the gRPC metadata entries that become request parameters. */
  readonly grpcHeaderForwardPattern?: RegExp;
  /** `--auth-token-file` (beyond Triton): a file holding the bearer token every API asks for; undefined: none. */
  readonly authTokenFile?: string;
  // Issue 24, item 8 (a model cannot stop the server):
  /**
   * `--model-load-timeout-secs`: how long one model version may take to load, warmup included;
   * past it the version is UNAVAILABLE and its instances are stopped. Triton has no such limit.
   */
  readonly modelLoadTimeoutMs: number;
  // Issue 24, the logging API and cross-origin safety:
  /** `--allow-log-file-update`: the logging extension may change the log file's path (Triton: never). */
  readonly isLogFileUpdateAllowed: boolean;
  /** `--http-cors-origins`: origins (`https://app.example`) whose browser pages may call the HTTP API, or `*`; none by default. */
  readonly httpCorsOrigins: readonly string[];
  // Issue 24, confinement and code-bearing uploads:
  /** `--allow-model-code-upload`: load requests may bring files a backend runs as code (.py, .js, .so, .pt...). */
  readonly isModelCodeUploadAllowed: boolean;
  // Issue 24, TLS:
  /** `--grpc-use-ssl[-mutual]`, `--grpc-server-cert`, `--grpc-server-key`, `--grpc-root-cert` (Triton's); undefined: no TLS. */
  readonly grpcTls?: TlsFiles;
  /** `--http-use-ssl[-mutual]` and friends (beyond Triton, whose HTTP has no TLS); undefined: plain HTTP. */
  readonly httpTls?: TlsFiles;
  /** `--metrics-use-ssl[-mutual]` and friends (beyond Triton); undefined: plain HTTP. */
  readonly metricsTls?: TlsFiles;
  // Issue 19, many models:
  /** `--model-load-thread-count` (Triton's): how many models load at once. */
  readonly modelLoadThreadCount: number;
  /** `--model-load-retry-count` (Triton's): how many times a model version whose load failed is loaded again. */
  readonly modelLoadRetryCount: number;
  /** `--model-config-name` (Triton's): each model's configs/<name>.pbtxt, where it has one, instead of its config.pbtxt. */
  readonly modelConfigName?: string;
  /** `--load-on-demand`: a request for a model that is not loaded loads it; modes NONE and POLL then load nothing at start-up. */
  readonly isLoadOnDemand: boolean;
  /** `--max-loaded-models`: the most models loaded at once; undefined: no limit. */
  readonly maxLoadedModels?: number;
  /** `--model-memory-budget`: the most estimated memory of the loaded models, in bytes; undefined: no limit. */
  readonly modelMemoryBudgetBytes?: number;
  // Issue 16, the response cache and the rate limiter:
  /** `--cache-config local,size=BYTES` (or the deprecated `--response-cache-byte-size`): the response cache's size; undefined: no cache. */
  readonly responseCacheBytes?: number;
  /** `--cache-config redis,host=H --cache-config redis,port=P ...`: Triton's redis cache instead; undefined: none. */
  readonly redisCache?: RedisCacheConfig;
  /** `--rate-limit`: `off` runs an instance as soon as it is free; `execution_count` waits for its resources, by priority. */
  readonly rateLimit: 'off' | 'execution_count';
  /** `--rate-limit-resource NAME:COUNT[:DEVICE]`: how many of each resource the server has; none: the most any instance asks for. */
  readonly rateLimitResources: readonly RateLimitResource[];
  // Issue 23, Triton's flags:
  /** One line per Triton flag given that has no effect here (triton-flags.ts), logged as a warning at start-up. */
  readonly startupWarnings: readonly string[];
  /** `--trace-config` (and Triton's deprecated --trace-* flags): the trace settings at start-up. */
  readonly traceSettings: TraceSettings;
  /** `--trace-config mode=opentelemetry` with its `opentelemetry,<setting>=<value>`: spans exported over OTLP/HTTP; undefined: Triton's trace file. */
  readonly openTelemetry?: OpenTelemetrySettings;
  /** `--allow-vertex-ai` (Triton's; on by default when AIP_MODE=PREDICTION): the Vertex AI front end; undefined: off. */
  readonly vertexAi?: VertexAiSettings;
  /** `--allow-sagemaker` (Triton's): the SageMaker front end, its model and modes from the SAGEMAKER_TRITON_* environment; undefined: off. */
  readonly sageMaker?: SageMakerSettings;
}

/** The settings of Triton's redis cache (triton-inference-server/redis_cache), timeouts in milliseconds (0: none). */
export interface RedisCacheConfig {
  readonly host: string;
  readonly port: number;
  readonly user?: string;
  readonly password?: string;
  readonly db?: number;
  readonly connectTimeoutMs?: number;
  readonly socketTimeoutMs?: number;
}

/** One `--rate-limit-resource`: a resource's count on one device, or on every device when `device` is undefined. */
export interface RateLimitResource {
  readonly name: string;
  readonly count: number;
  readonly device?: number;
}

export const DEFAULT_SERVER_OPTIONS: Omit<ServerOptions, 'modelRepositories'> = {
  modelControlMode: 'none',
  startupModels: [],
  repositoryPollMs: 15_000,
  modelUnloadTimeoutMs: 30_000,
  isHttpAllowed: true,
  httpPort: 8000,
  httpAddress: '0.0.0.0',
  httpMaxInputBytes: 2 ** 26,
  isDashboardAllowed: true,
  isGrpcAllowed: true,
  grpcPort: 8001,
  grpcAddress: '0.0.0.0',
  grpcMaxMessageBytes: 2 ** 31 - 1,
  grpcMaxDecompressedMessageBytes: 2 ** 26,
  grpcKeepaliveTimeMs: 7_200_000,
  grpcKeepaliveTimeoutMs: 20_000,
  isGrpcKeepalivePermittedWithoutCalls: false,
  grpcHttp2MaxPingStrikes: 2,
  grpcHttp2MinRecvPingIntervalWithoutDataMs: 300_000,
  isMetricsAllowed: true,
  metricsPort: 8002,
  metricsIntervalMs: 2000,
  isCpuMetricsAllowed: true,
  metricsConfig: DEFAULT_METRICS_CONFIG,
  exitTimeoutMs: 30_000,
  isStrictReadiness: true,
  isClientShmAllowed: false,
  isExitOnError: true,
  isModelNamespacing: false,
  isAutoCompleteEnabled: true,
  defaultMaxBatchSize: 4,
  onnxExecutionThreadCount: 0,
  id: 'nereid',
  log: { info: true, warning: true, error: true, verboseLevel: 0, format: 'default' },
  httpRestrictedApis: {},
  grpcRestrictedProtocols: {},
  // Issue 24, item 8 (a model cannot stop the server): ten minutes, enough for a large model read
  // from a slow disk and its warmup, short enough that a hung initialize cannot hold start-up for good.
  modelLoadTimeoutMs: 600_000,
  // Issue 24, the logging API and cross-origin safety:
  isLogFileUpdateAllowed: false,
  httpCorsOrigins: [],
  // Issue 24, confinement and code-bearing uploads:
  isModelCodeUploadAllowed: false,
  // Issue 19, many models:
  modelLoadThreadCount: 4,
  modelLoadRetryCount: 0,
  isLoadOnDemand: false,
  // Issue 16, the response cache and the rate limiter:
  rateLimit: 'off',
  rateLimitResources: [],
  // Issue 23, Triton's flags:
  startupWarnings: [],
  traceSettings: DEFAULT_TRACE_SETTINGS,
};

/** Flags, what each takes, and one line of help. */
const FLAGS = {
  'model-repository': { type: 'string', multiple: true, help: 'DIR  a model repository: a folder, s3://[host:port/]bucket/path or as://account/container/path (repeatable)' },
  'model-store': { type: 'string', multiple: true, help: 'DIR  the same as --model-repository' },
  'model-control-mode': { type: 'string', help: 'none|explicit|poll  load all at start, through the API, or as the folders change (default none)' },
  'model-unload-timeout-secs': { type: 'string', help: 'SECS  how long an unload or reload waits for accepted requests (default 30)' },
  'repository-poll-secs': { type: 'string', help: 'SECS  poll mode: how often the repositories are read again (default 15)' },
  'load-model': { type: 'string', multiple: true, help: 'NAME  explicit mode: load NAME at start (repeatable; * for all)' },
  'allow-http': { type: 'string', help: 'BOOL  serve HTTP/REST (default true)' },
  'http-port': { type: 'string', help: 'PORT  HTTP port (default 8000; 0 picks a free one)' },
  'http-address': { type: 'string', help: 'ADDR  HTTP address (default 0.0.0.0)' },
  'http-max-input-size': { type: 'string', help: 'BYTES  largest request body (default 67108864)' },
  'allow-dashboard': { type: 'string', help: 'BOOL  serve the live dashboard at /dashboard on the HTTP port (default true)' },
  'allow-grpc': { type: 'string', help: 'BOOL  serve gRPC (default true)' },
  'grpc-port': { type: 'string', help: 'PORT  gRPC port (default 8001; 0 picks a free one)' },
  'grpc-address': { type: 'string', help: 'ADDR  gRPC address (default 0.0.0.0)' },
  'grpc-max-message-size': { type: 'string', help: 'BYTES  largest gRPC message (default 2147483647)' },
  'grpc-max-decompressed-message-size': { type: 'string', help: 'BYTES  the most a compressed gRPC message may inflate to (default 67108864)' },
  'grpc-keepalive-time': { type: 'string', help: 'MS  keepalive ping period (default 7200000)' },
  'grpc-keepalive-timeout': { type: 'string', help: 'MS  keepalive ping timeout (default 20000)' },
  'grpc-keepalive-permit-without-calls': { type: 'string', help: 'BOOL  allow pings without calls (default false)' },
  'grpc-http2-max-ping-strikes': { type: 'string', help: 'N  bad pings before closing (default 2)' },
  'grpc-http2-min-recv-ping-interval-without-data': { type: 'string', help: 'MS  least time between pings (default 300000)' },
  'allow-metrics': { type: 'string', help: 'BOOL  serve Prometheus metrics (default true)' },
  'metrics-port': { type: 'string', help: 'PORT  metrics port (default 8002; 0 picks a free one)' },
  'metrics-address': { type: 'string', help: 'ADDR  metrics address (default: the HTTP address)' },
  'metrics-interval-ms': { type: 'string', help: 'MS  how often CPU and memory metrics are sampled (default 2000)' },
  'allow-cpu-metrics': { type: 'string', help: 'BOOL  report nv_cpu_* metrics (default true)' },
  'metrics-config': {
    type: 'string',
    multiple: true,
    help: 'KEY=VALUE  counter_latencies, summary_latencies, histogram_latencies (BOOL), summary_quantiles=0.5:0.05,0.9:0.01',
  },
  'exit-timeout-secs': { type: 'string', help: 'SECS  how long shutdown waits for in-flight requests (default 30)' },
  'strict-readiness': { type: 'string', help: 'BOOL  ready only when every model loaded, loading or failed is ready (default true)' },
  'allow-client-shm': { type: 'string', help: 'BOOL  let clients register system shared memory regions and pass tensors in them (default false)' },
  'exit-on-error': { type: 'string', help: 'BOOL  exit when a model fails to load at start-up (default true, as Triton)' },
  'model-namespacing': {
    type: 'string',
    help: "BOOL  serve models of the same name from different repositories, each in its repository's namespace; a request naming a shared name is refused as ambiguous (default false)",
  },
  'disable-auto-complete-config': { type: 'boolean', help: '  take config.pbtxt as written; fill nothing from the model' },
  'strict-model-config': { type: 'string', help: 'BOOL  deprecated: true is --disable-auto-complete-config' },
  'backend-config': { type: 'string', multiple: true, help: '[BACKEND,]KEY=VALUE  backend setting: default-max-batch-size=4, onnxruntime,execution-thread-count=N (threads ONNX Runtime sessions share; default one per core)' },
  id: { type: 'string', help: 'NAME  server name in metadata (default nereid)' },
  'log-verbose': { type: 'string', help: 'LEVEL  verbose logging level (default 0: off)' },
  'log-info': { type: 'string', help: 'BOOL  log info lines (default true)' },
  'log-warning': { type: 'string', help: 'BOOL  log warnings (default true)' },
  'log-error': { type: 'string', help: 'BOOL  log errors (default true)' },
  'log-format': { type: 'string', help: 'default|ISO8601  time stamp layout' },
  'log-file': { type: 'string', help: 'FILE  append the log to FILE instead of stderr' },
  // Issue 24, restricted APIs and token authentication:
  'http-restricted-api': {
    type: 'string',
    multiple: true,
    help: 'CATEGORIES:HEADER=VALUE  HTTP APIs of these categories (health, metadata, inference, shared-memory, model-config, model-repository, statistics, trace, logging) need HEADER: VALUE (repeatable)',
  },
  'grpc-restricted-protocol': {
    type: 'string',
    multiple: true,
    help: 'CATEGORIES:KEY=VALUE  gRPC RPCs of these categories need metadata triton-grpc-protocol-KEY: VALUE (repeatable)',
  },
  'auth-token-file': { type: 'string', help: 'FILE  every API of HTTP and gRPC needs Authorization: Bearer <the token in FILE> (default: none)' },
  'http-header-forward-pattern': { type: 'string', help: 'REGEX  HTTP headers whose name it matches become request parameters (case-insensitive; (?-i) for not)' },
  'grpc-header-forward-pattern': { type: 'string', help: 'REGEX  gRPC metadata whose key it matches becomes request parameters (case-insensitive; (?-i) for not)' },
  // Issue 24, item 8 (a model cannot stop the server):
  'model-load-timeout-secs': { type: 'string', help: 'SECS  how long one model version may take to load, warmup included (default 600)' },
  // Issue 24, the logging API and cross-origin safety:
  'allow-log-file-update': { type: 'string', help: 'BOOL  let POST /v2/logging and LogSettings change log_file (default false)' },
  'http-cors-origins': { type: 'string', help: 'ORIGINS  comma-separated origins (or *) whose browser pages may call the HTTP API (default none)' },
  // Issue 24, confinement and code-bearing uploads:
  'allow-model-code-upload': { type: 'string', help: 'BOOL  load requests may bring files a backend runs as code: .py, .js, .so, .pt... (default false)' },
  // Issue 24, TLS (gRPC: Triton's flags; HTTP and metrics: the same names, beyond Triton):
  'grpc-use-ssl': { type: 'string', help: 'BOOL  gRPC over TLS, with --grpc-server-cert and --grpc-server-key (default false)' },
  'grpc-use-ssl-mutual': { type: 'string', help: 'BOOL  gRPC over TLS that asks every client for a certificate signed by --grpc-root-cert (default false)' },
  'grpc-server-cert': { type: 'string', help: "FILE  PEM certificate chain of the gRPC service (reloaded when it changes, or on SIGHUP)" },
  'grpc-server-key': { type: 'string', help: 'FILE  PEM private key of --grpc-server-cert' },
  'grpc-root-cert': { type: 'string', help: "FILE  PEM CA certificates that sign the gRPC clients' certificates" },
  'http-use-ssl': { type: 'string', help: 'BOOL  HTTPS, with --http-server-cert and --http-server-key (default false)' },
  'http-use-ssl-mutual': { type: 'string', help: 'BOOL  HTTPS that asks every client for a certificate signed by --http-root-cert (default false)' },
  'http-server-cert': { type: 'string', help: 'FILE  PEM certificate chain of the HTTP service (reloaded when it changes, or on SIGHUP)' },
  'http-server-key': { type: 'string', help: 'FILE  PEM private key of --http-server-cert' },
  'http-root-cert': { type: 'string', help: "FILE  PEM CA certificates that sign the HTTP clients' certificates" },
  'metrics-use-ssl': { type: 'string', help: 'BOOL  metrics over HTTPS, with --metrics-server-cert and --metrics-server-key (default false)' },
  'metrics-use-ssl-mutual': { type: 'string', help: 'BOOL  metrics over HTTPS that asks every scraper for a certificate signed by --metrics-root-cert (default false)' },
  'metrics-server-cert': { type: 'string', help: 'FILE  PEM certificate chain of the metrics service (reloaded when it changes, or on SIGHUP)' },
  'metrics-server-key': { type: 'string', help: 'FILE  PEM private key of --metrics-server-cert' },
  'metrics-root-cert': { type: 'string', help: "FILE  PEM CA certificates that sign the scrapers' certificates" },
  // Issue 19, many models:
  'model-load-thread-count': { type: 'string', help: 'N  how many models load at once (default 4)' },
  'model-load-retry-count': { type: 'string', help: 'N  how many times a failed model load is tried again (default 0)' },
  'model-config-name': { type: 'string', help: 'NAME  each model reads configs/NAME.pbtxt where it has one, config.pbtxt otherwise' },
  'load-on-demand': { type: 'string', help: 'BOOL  a request for a model that is not loaded loads it (default false)' },
  'max-loaded-models': { type: 'string', help: 'N  most models loaded at once; least recently used ones loaded on demand make room (default: no limit)' },
  'model-memory-budget': { type: 'string', help: 'SIZE  most estimated memory of loaded models, bytes or with KB/MB/GB (default: no limit)' },
  // Issue 16, the response cache and the rate limiter:
  'cache-config': {
    type: 'string',
    multiple: true,
    help: 'CACHE,KEY=VALUE  the response cache of the models with response_cache { enable: true }: local,size=BYTES, or redis,host=H and redis,port=P (repeatable; default: none)',
  },
  'response-cache-byte-size': { type: 'string', help: 'BYTES  deprecated: the same as --cache-config local,size=BYTES' },
  'rate-limit': { type: 'string', help: 'off|execution_count  execution_count: an instance executes once the resources its rate_limiter names are free, by priority (default off)' },
  'rate-limit-resource': {
    type: 'string',
    multiple: true,
    help: 'NAME:COUNT[:DEVICE]  how many of a resource there are (repeatable; default: the most any instance asks for)',
  },
  // Issue 23, the trace extension:
  'trace-config': {
    type: 'string',
    multiple: true,
    help: '[MODE,]KEY=VALUE  tracing: level=OFF|TIMESTAMPS|TENSORS (repeatable), rate=N (default 1000), count=N (default -1: no limit), mode=triton|opentelemetry; triton,file=FILE, triton,log-frequency=N (default 0: at shutdown); opentelemetry,url=URL (default http://localhost:4318/v1/traces), opentelemetry,resource=KEY=VALUE (repeatable), opentelemetry,bsp_max_queue_size=N, opentelemetry,bsp_schedule_delay=MS, opentelemetry,bsp_max_export_batch_size=N',
  },
  'trace-file': { type: 'string', help: 'FILE  deprecated: --trace-config triton,file=FILE' },
  'trace-level': { type: 'string', multiple: true, help: 'LEVEL  deprecated: --trace-config level=LEVEL' },
  'trace-rate': { type: 'string', help: 'N  deprecated: --trace-config rate=N' },
  'trace-count': { type: 'string', help: 'N  deprecated: --trace-config count=N' },
  'trace-log-frequency': { type: 'string', help: 'N  deprecated: --trace-config triton,log-frequency=N' },
  // Triton's SageMaker front end:
  'allow-sagemaker': { type: 'string', help: 'BOOL  serve SageMaker\'s /ping, /invocations (on SAGEMAKER_TRITON_DEFAULT_MODEL_NAME) and /models (default false)' },
  'sagemaker-port': { type: 'string', help: 'PORT  SageMaker port, on 0.0.0.0 (default 8080)' },
  'sagemaker-safe-port-range': { type: 'string', help: 'LOW-HIGH  the ports every other service on the same address must use' },
  'sagemaker-mme-root': { type: 'string', help: 'DIR  the folder POST /models may load models from (default /opt/ml/models, where SageMaker puts them); not in Triton' },
  // Triton's Vertex AI front end:
  'allow-vertex-ai': { type: 'string', help: 'BOOL  serve the Vertex AI routes AIP_PREDICT_ROUTE and AIP_HEALTH_ROUTE (default true if AIP_MODE=PREDICTION, which also turns HTTP and gRPC off by default)' },
  'vertex-ai-port': { type: 'string', help: 'PORT  Vertex AI port, on 0.0.0.0 (default AIP_HTTP_PORT, or 8080)' },
  'vertex-ai-default-model': { type: 'string', help: "NAME  the model the predict route infers on (default: the repository's only model)" },
  help: { type: 'boolean', short: 'h', help: '  show this help' },
} as const;

/** Triton's flags Nereid ignores (triton-flags.ts), parsed with the others. */
const TRITON_ONLY_FLAG_SPECS = Object.fromEntries(
  Object.entries(TRITON_ONLY_FLAGS).map(([name, flag]) => [
    name,
    {
      type: 'string',
      ...(flag.isRepeatable === true ? { multiple: true } : {}),
      help: `${flag.argument}  ignored, with a warning: ${flag.reason}`,
    },
  ]),
) as Readonly<Record<string, FlagSpec>>;

const HELP_COLUMN = 44;
const HELP_WIDTH = 120;

/** One flag's help: the flag, then its text in the column, wrapped at HELP_WIDTH; a flag too long for the column puts its text on the next line. */
function helpLines(name: string, help: string): string[] {
  const [arg, ...rest] = help.split('  ');
  const flag = `  --${name}${arg ? ` ${arg}` : ''}`;
  const words = rest.join('  ').split(' ').filter((word) => word !== '');
  const lines: string[] = [];
  let line = '';
  for (const word of words) {
    if (line !== '' && HELP_COLUMN + line.length + 1 + word.length > HELP_WIDTH) {
      lines.push(line);
      line = word;
    } else {
      line = line === '' ? word : `${line} ${word}`;
    }
  }
  if (line !== '') lines.push(line);
  const indent = ' '.repeat(HELP_COLUMN);
  const text = lines.map((textLine) => indent + textLine);
  if (flag.length + 2 > HELP_COLUMN) return [flag, ...text];
  return [(flag.padEnd(HELP_COLUMN) + (lines[0] ?? '')).trimEnd(), ...text.slice(1)];
}

export function serveUsage(): string {
  const section = (flags: Readonly<Record<string, { readonly help: string }>>): string =>
    Object.entries(flags)
      .flatMap(([name, flag]) => helpLines(name, flag.help))
      .join('\n');
  return (
    `Usage: nereid serve --model-repository DIR [flags]\n\nFlags (Triton's names and defaults):\n${section(FLAGS)}\n\n` +
    `Triton's flags that have no effect here (accepted with a warning):\n${section(TRITON_ONLY_FLAG_SPECS)}\n`
  );
}

/** Triton's prefix of the metadata keys `--grpc-restricted-protocol` names (src/grpc/grpc_server.h: gRPC wants lowercase keys). */
export const GRPC_RESTRICTED_KEY_PREFIX = 'triton-grpc-protocol-';

const usageError = (message: string): NereidError => new NereidError('INVALID_ARG', `nereid serve: ${message}`);

/** `--model-config-name`: Triton refuses an empty one in its words; a name with a space cannot be a file Triton would look for. */
function modelConfigName(name: string | undefined): Partial<ServerOptions> {
  if (name === undefined) return {};
  if (name === '') throw usageError('Error: empty argument for --model-config-name');
  if (/[\s/]/.test(name)) throw usageError(`--model-config-name '${name}': the name may contain no space or '/' (it names configs/<name>.pbtxt)`);
  return { modelConfigName: name };
}

function parseBoolean(flag: string, value: string | undefined, fallback: boolean): boolean {
  if (value === undefined) return fallback;
  const lower = value.toLowerCase();
  if (['true', '1', 'on', 'yes'].includes(lower)) return true;
  if (['false', '0', 'off', 'no'].includes(lower)) return false;
  throw usageError(`--${flag} takes true or false, got '${value}'`);
}

function parseInteger(flag: string, value: string | undefined, fallback: number, min: number, max: number): number {
  if (value === undefined) return fallback;
  const parsed = Number(value);
  if (!/^-?[0-9]+$/.test(value) || parsed < min || parsed > max) {
    throw usageError(`--${flag} takes an integer from ${min} to ${max}, got '${value}'`);
  }
  return parsed;
}

const SIZE_UNITS: Readonly<Record<string, number>> = { '': 1, B: 1, KB: 2 ** 10, MB: 2 ** 20, GB: 2 ** 30, TB: 2 ** 40 };

/** A size in bytes, or with a suffix KB, MB, GB or TB (powers of 1024, any case; `512MB`, `1.5 GB`). */
export function parseByteSize(flag: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const match = /^\s*([0-9]+(?:\.[0-9]+)?)\s*([a-zA-Z]*)\s*$/.exec(value);
  const unit = SIZE_UNITS[match?.[2]?.toUpperCase() ?? 'none'];
  const bytes = match !== null && unit !== undefined ? Math.floor(Number(match[1]) * unit) : Number.NaN;
  if (!(bytes >= 1) || !Number.isSafeInteger(bytes)) {
    throw usageError(`--${flag} takes a size in bytes or with KB, MB, GB or TB (e.g. 512MB), got '${value}'`);
  }
  return bytes;
}

function parseMetricsConfig(entries: readonly string[]): MetricsConfig {
  let config = DEFAULT_METRICS_CONFIG;
  for (const entry of entries) {
    const [key, value] = entry.split('=', 2) as [string, string | undefined];
    switch (key) {
      case 'counter_latencies':
        config = { ...config, counterLatencies: parseBoolean(`metrics-config ${key}`, value ?? '', true) };
        break;
      case 'summary_latencies':
        config = { ...config, summaryLatencies: parseBoolean(`metrics-config ${key}`, value ?? '', false) };
        break;
      case 'histogram_latencies':
        config = { ...config, histogramLatencies: parseBoolean(`metrics-config ${key}`, value ?? '', false) };
        break;
      case 'summary_quantiles': {
        const quantiles = (value ?? '').split(',').map((pair) => Number(pair.split(':', 1)[0]));
        if (quantiles.length === 0 || quantiles.some((q) => !(q > 0 && q < 1))) {
          throw usageError(`--metrics-config summary_quantiles takes QUANTILE:ERROR pairs with quantiles between 0 and 1, got '${value}'`);
        }
        config = { ...config, summaryQuantiles: quantiles };
        break;
      }
      default:
        throw usageError(
          `--metrics-config '${entry}': unknown setting '${key}'; Nereid knows counter_latencies, summary_latencies, histogram_latencies, summary_quantiles`,
        );
    }
  }
  return config;
}

function parseBackendConfig(entries: readonly string[]): Pick<ServerOptions, 'defaultMaxBatchSize' | 'onnxExecutionThreadCount'> {
  let defaultMaxBatchSize = DEFAULT_SERVER_OPTIONS.defaultMaxBatchSize;
  let onnxExecutionThreadCount = DEFAULT_SERVER_OPTIONS.onnxExecutionThreadCount;
  for (const entry of entries) {
    const backend = entry.includes(',') ? entry.slice(0, entry.indexOf(',')) : undefined;
    const setting = backend !== undefined ? entry.slice(entry.indexOf(',') + 1) : entry;
    const [key, value] = setting.split('=', 2);
    if (key === 'default-max-batch-size') {
      defaultMaxBatchSize = parseInteger('backend-config default-max-batch-size', value, 4, 0, 2 ** 31 - 1);
    } else if (key === 'execution-thread-count' && backend === 'onnxruntime') {
      onnxExecutionThreadCount = parseInteger('backend-config onnxruntime,execution-thread-count', value, 0, 0, 1024);
    } else {
      throw usageError(`--backend-config '${entry}': unknown setting '${key}'; Nereid knows default-max-batch-size and onnxruntime,execution-thread-count`);
    }
  }
  return { defaultMaxBatchSize, onnxExecutionThreadCount };
}

/**
 * Parses `nereid serve` arguments into ServerOptions. Flags take `--flag=value` or `--flag value`;
 * an unknown flag is an error that suggests the closest known one. Returns 'help' for --help.
 */
export function parseServeArgs(args: readonly string[], env: Readonly<Record<string, string | undefined>> = process.env): ServerOptions | 'help' {
  const values = parseFlags(args, { ...FLAGS, ...TRITON_ONLY_FLAG_SPECS }, 'serve', usageError);
  if (values.help === true) return 'help';
  const vertexAiEnvironment = readVertexAiEnvironment(env, usageError);
  const string = (name: keyof typeof FLAGS): string | undefined => values[name] as string | undefined;
  const forwardPattern = (flag: 'http-header-forward-pattern' | 'grpc-header-forward-pattern', key: 'httpHeaderForwardPattern' | 'grpcHeaderForwardPattern'): Partial<ServerOptions> => {
    const source = string(flag);
    return source === undefined ? {} : { [key]: compileHeaderForwardPattern(flag, source, usageError) };
  };
  const repositories = [...((values['model-repository'] as string[]) ?? []), ...((values['model-store'] as string[]) ?? [])];
  // Triton's: AIP_STORAGE_URI is the repository when no flag names one.
  if (repositories.length === 0 && vertexAiEnvironment.storageUri !== undefined) repositories.push(vertexAiEnvironment.storageUri);
  if (repositories.length === 0) throw usageError('--model-repository is required (a folder of models, e.g. examples/model_repository)');
  const defaults = DEFAULT_SERVER_OPTIONS;
  const cache = parseCacheConfig((values['cache-config'] as string[] | undefined) ?? [], string('response-cache-byte-size'));
  const trace = parseTraceConfig(
    {
      config: (values['trace-config'] as string[] | undefined) ?? [],
      ...(string('trace-file') !== undefined ? { file: string('trace-file')! } : {}),
      ...(values['trace-level'] !== undefined ? { level: values['trace-level'] as string[] } : {}),
      ...(string('trace-rate') !== undefined ? { rate: string('trace-rate')! } : {}),
      ...(string('trace-count') !== undefined ? { count: string('trace-count')! } : {}),
      ...(string('trace-log-frequency') !== undefined ? { logFrequency: string('trace-log-frequency')! } : {}),
    },
    usageError,
  );
  const logFormat = string('log-format') ?? defaults.log.format;
  if (logFormat !== 'default' && logFormat !== 'ISO8601') throw usageError(`--log-format takes default or ISO8601, got '${logFormat}'`);
  const logFile = string('log-file');
  const controlMode = string('model-control-mode') ?? defaults.modelControlMode;
  if (controlMode !== 'none' && controlMode !== 'explicit' && controlMode !== 'poll') {
    throw usageError(`--model-control-mode takes none, explicit or poll, got '${controlMode}'`);
  }
  const startupModels = (values['load-model'] as string[] | undefined) ?? [];
  if (startupModels.length > 0 && controlMode !== 'explicit') {
    throw usageError('--load-model needs --model-control-mode=explicit (in mode none every model loads at start)');
  }
  const tls = (service: TlsService): TlsFiles | undefined => {
    const flag = (name: string): string | undefined => values[`${service}-${name}`] as string | undefined;
    return resolveTlsFiles(
      service,
      {
        useSsl: parseBoolean(`${service}-use-ssl`, flag('use-ssl'), false),
        useSslMutual: parseBoolean(`${service}-use-ssl-mutual`, flag('use-ssl-mutual'), false),
        serverCert: flag('server-cert'),
        serverKey: flag('server-key'),
        rootCert: flag('root-cert'),
      },
      usageError,
    );
  };
  const [grpcTls, httpTls, metricsTls] = [tls('grpc'), tls('http'), tls('metrics')];
  const options: ServerOptions = {
    modelRepositories: repositories,
    modelControlMode: controlMode,
    startupModels,
    modelUnloadTimeoutMs: parseInteger('model-unload-timeout-secs', string('model-unload-timeout-secs'), defaults.modelUnloadTimeoutMs / 1000, 0, 86_400) * 1000,
    repositoryPollMs: parseInteger('repository-poll-secs', string('repository-poll-secs'), defaults.repositoryPollMs / 1000, 1, 86_400) * 1000,
    isHttpAllowed: parseBoolean('allow-http', string('allow-http'), defaults.isHttpAllowed && !vertexAiEnvironment.isPredictionMode),
    httpPort: parseInteger('http-port', string('http-port'), defaults.httpPort, 0, 65535),
    httpAddress: string('http-address') ?? defaults.httpAddress,
    httpMaxInputBytes: parseInteger('http-max-input-size', string('http-max-input-size'), defaults.httpMaxInputBytes, 1, 2 ** 40),
    isDashboardAllowed: parseBoolean('allow-dashboard', string('allow-dashboard'), defaults.isDashboardAllowed),
    isGrpcAllowed: parseBoolean('allow-grpc', string('allow-grpc'), defaults.isGrpcAllowed && !vertexAiEnvironment.isPredictionMode),
    grpcPort: parseInteger('grpc-port', string('grpc-port'), defaults.grpcPort, 0, 65535),
    grpcAddress: string('grpc-address') ?? defaults.grpcAddress,
    grpcMaxMessageBytes: parseInteger('grpc-max-message-size', string('grpc-max-message-size'), defaults.grpcMaxMessageBytes, 1, 2 ** 31 - 1),
    grpcMaxDecompressedMessageBytes: parseInteger(
      'grpc-max-decompressed-message-size',
      string('grpc-max-decompressed-message-size'),
      defaults.grpcMaxDecompressedMessageBytes,
      1,
      2 ** 31 - 1,
    ),
    grpcKeepaliveTimeMs: parseInteger('grpc-keepalive-time', string('grpc-keepalive-time'), defaults.grpcKeepaliveTimeMs, 1, 2 ** 31 - 1),
    grpcKeepaliveTimeoutMs: parseInteger('grpc-keepalive-timeout', string('grpc-keepalive-timeout'), defaults.grpcKeepaliveTimeoutMs, 1, 2 ** 31 - 1),
    isGrpcKeepalivePermittedWithoutCalls: parseBoolean(
      'grpc-keepalive-permit-without-calls',
      string('grpc-keepalive-permit-without-calls'),
      defaults.isGrpcKeepalivePermittedWithoutCalls,
    ),
    grpcHttp2MaxPingStrikes: parseInteger('grpc-http2-max-ping-strikes', string('grpc-http2-max-ping-strikes'), defaults.grpcHttp2MaxPingStrikes, 0, 1000),
    grpcHttp2MinRecvPingIntervalWithoutDataMs: parseInteger(
      'grpc-http2-min-recv-ping-interval-without-data',
      string('grpc-http2-min-recv-ping-interval-without-data'),
      defaults.grpcHttp2MinRecvPingIntervalWithoutDataMs,
      0,
      2 ** 31 - 1,
    ),
    isMetricsAllowed: parseBoolean('allow-metrics', string('allow-metrics'), defaults.isMetricsAllowed),
    metricsPort: parseInteger('metrics-port', string('metrics-port'), defaults.metricsPort, 0, 65535),
    ...(string('metrics-address') !== undefined ? { metricsAddress: string('metrics-address')! } : {}),
    metricsIntervalMs: parseInteger('metrics-interval-ms', string('metrics-interval-ms'), defaults.metricsIntervalMs, 1, 86_400_000),
    isCpuMetricsAllowed: parseBoolean('allow-cpu-metrics', string('allow-cpu-metrics'), defaults.isCpuMetricsAllowed),
    metricsConfig: parseMetricsConfig((values['metrics-config'] as string[]) ?? []),
    exitTimeoutMs: parseInteger('exit-timeout-secs', string('exit-timeout-secs'), defaults.exitTimeoutMs / 1000, 0, 86_400) * 1000,
    isStrictReadiness: parseBoolean('strict-readiness', string('strict-readiness'), defaults.isStrictReadiness),
    isClientShmAllowed: parseBoolean('allow-client-shm', string('allow-client-shm'), defaults.isClientShmAllowed),
    isExitOnError: parseBoolean('exit-on-error', string('exit-on-error'), defaults.isExitOnError),
    isModelNamespacing: parseBoolean('model-namespacing', string('model-namespacing'), defaults.isModelNamespacing),
    isAutoCompleteEnabled:
      values['disable-auto-complete-config'] !== true && !parseBoolean('strict-model-config', string('strict-model-config'), false),
    ...parseBackendConfig((values['backend-config'] as string[]) ?? []),
    id: string('id') ?? defaults.id,
    log: {
      info: parseBoolean('log-info', string('log-info'), defaults.log.info),
      warning: parseBoolean('log-warning', string('log-warning'), defaults.log.warning),
      error: parseBoolean('log-error', string('log-error'), defaults.log.error),
      verboseLevel: parseInteger('log-verbose', intBoolText(string('log-verbose')), defaults.log.verboseLevel, 0, 1000),
      format: logFormat,
      ...(logFile !== undefined ? { file: logFile } : {}),
    },
    httpRestrictedApis: parseRestrictedFeatures(
      (values['http-restricted-api'] as string[] | undefined) ?? [],
      { optionName: 'http-restricted-api', featureType: 'api', keyPrefix: '' },
      usageError,
    ),
    grpcRestrictedProtocols: parseRestrictedFeatures(
      (values['grpc-restricted-protocol'] as string[] | undefined) ?? [],
      { optionName: 'grpc-restricted-protocol', featureType: 'protocol', keyPrefix: GRPC_RESTRICTED_KEY_PREFIX },
      usageError,
    ),
    ...(string('auth-token-file') !== undefined ? { authTokenFile: string('auth-token-file')! } : {}),
    ...forwardPattern('http-header-forward-pattern', 'httpHeaderForwardPattern'),
    ...forwardPattern('grpc-header-forward-pattern', 'grpcHeaderForwardPattern'),
    // Issue 24, item 8 (a model cannot stop the server):
    modelLoadTimeoutMs: parseInteger('model-load-timeout-secs', string('model-load-timeout-secs'), defaults.modelLoadTimeoutMs / 1000, 1, 86_400) * 1000,
    // Issue 24, the logging API and cross-origin safety:
    isLogFileUpdateAllowed: parseBoolean('allow-log-file-update', string('allow-log-file-update'), defaults.isLogFileUpdateAllowed),
    httpCorsOrigins: parseCorsOrigins(string('http-cors-origins')),
    // Issue 24, confinement and code-bearing uploads:
    isModelCodeUploadAllowed: parseBoolean('allow-model-code-upload', string('allow-model-code-upload'), defaults.isModelCodeUploadAllowed),
    // Issue 24, TLS:
    ...(grpcTls !== undefined ? { grpcTls } : {}),
    ...(httpTls !== undefined ? { httpTls } : {}),
    ...(metricsTls !== undefined ? { metricsTls } : {}),
    // Issue 19, many models:
    modelLoadThreadCount: parseInteger('model-load-thread-count', string('model-load-thread-count'), defaults.modelLoadThreadCount, 1, 1024),
    modelLoadRetryCount: parseInteger('model-load-retry-count', string('model-load-retry-count'), defaults.modelLoadRetryCount, 0, 1024),
    ...modelConfigName(string('model-config-name')),
    isLoadOnDemand: parseBoolean('load-on-demand', string('load-on-demand'), defaults.isLoadOnDemand),
    ...(string('max-loaded-models') !== undefined ? { maxLoadedModels: parseInteger('max-loaded-models', string('max-loaded-models'), 0, 1, 2 ** 31 - 1) } : {}),
    ...(string('model-memory-budget') !== undefined ? { modelMemoryBudgetBytes: parseByteSize('model-memory-budget', string('model-memory-budget'))! } : {}),
    // Issue 16, the response cache and the rate limiter:
    ...cache.options,
    rateLimit: parseRateLimit(string('rate-limit')),
    rateLimitResources: ((values['rate-limit-resource'] as string[] | undefined) ?? []).map(parseRateLimitResource),
    // Issue 23, Triton's flags and the trace extension:
    startupWarnings: [...checkTritonOnlyFlags(values), ...trace.warnings, ...cache.warnings],
    traceSettings: trace.settings,
    ...(trace.openTelemetry !== undefined ? { openTelemetry: trace.openTelemetry } : {}),
    ...(parseBoolean('allow-sagemaker', string('allow-sagemaker'), false)
      ? {
          sageMaker: {
            port: parseInteger('sagemaker-port', string('sagemaker-port'), 8080, 0, 65535),
            ...(string('sagemaker-safe-port-range') !== undefined ? { safePortRange: parseSafePortRange(string('sagemaker-safe-port-range')!, usageError) } : {}),
            ...readSageMakerEnvironment(env),
            mmeRoot: string('sagemaker-mme-root') ?? '/opt/ml/models',
          },
        }
      : {}),
    ...(parseBoolean('allow-vertex-ai', string('allow-vertex-ai'), vertexAiEnvironment.isPredictionMode)
      ? {
          vertexAi: {
            port: parseInteger('vertex-ai-port', string('vertex-ai-port'), vertexAiEnvironment.port, 0, 65535),
            ...(string('vertex-ai-default-model') !== undefined ? { defaultModel: string('vertex-ai-default-model')! } : {}),
            predictRoute: vertexAiEnvironment.predictRoute,
            healthRoute: vertexAiEnvironment.healthRoute,
          },
        }
      : {}),
  };
  if (options.authTokenFile === '') throw usageError('--auth-token-file takes the path of a file that holds the token, got an empty path');
  checkPortCollision(options);
  return options;
}

/**
 * `--http-cors-origins`: `*` alone, or origins as browsers send them (scheme://host[:port], no path),
 * lower-cased; a trailing slash is dropped.
 */
function parseCorsOrigins(value: string | undefined): readonly string[] {
  if (value === undefined) return DEFAULT_SERVER_OPTIONS.httpCorsOrigins;
  const origins = value.split(',').map((origin) => origin.trim().replace(/\/$/, '').toLowerCase());
  if (origins.includes('*')) {
    if (origins.length > 1) throw usageError(`--http-cors-origins takes * alone or a list of origins, got '${value}'`);
    return origins;
  }
  for (const origin of origins) {
    let parsed: URL | undefined;
    try {
      parsed = new URL(origin);
    } catch {
      parsed = undefined;
    }
    if (parsed === undefined || !/^https?:$/.test(parsed.protocol) || parsed.origin !== origin) {
      throw usageError(`--http-cors-origins: '${origin}' is not an origin; write scheme://host[:port], e.g. http://localhost:3000`);
    }
  }
  return origins;
}

/**
 * `--cache-config CACHE,KEY=VALUE` (repeatable) in Triton's format and with its messages
 * (src/command_line_parser.cc ParseCacheConfigOption; core src/server.cc InferenceServer::Init for two
 * caches; redis_cache RedisCache::Create for a missing address), and the deprecated
 * `--response-cache-byte-size`. Nereid has Triton's two caches: `local` (setting `size`) and `redis`
 * (the settings of Triton's redis_cache but its connection pool's: Nereid's client multiplexes one
 * connection). As in Triton, two caches are refused before either's settings are read.
 */
function parseCacheConfig(
  entries: readonly string[],
  byteSize: string | undefined,
): { options: Pick<ServerOptions, 'responseCacheBytes' | 'redisCache'>; warnings: string[] } {
  const bytes = byteSize === undefined ? undefined : parseTritonInteger('response-cache-byte-size', byteSize, 2n ** 63n - 1n);
  if (bytes !== undefined && entries.length > 0) {
    throw usageError('Incompatible flags --response-cache-byte-size and --cache-config both provided. Please provide one or the other.');
  }
  if (bytes !== undefined) {
    return {
      options: { responseCacheBytes: parseInteger('response-cache-byte-size', String(bytes), 0, 1, Number.MAX_SAFE_INTEGER) },
      warnings: [
        "Warning: '--response-cache-byte-size' has been deprecated! This will default to the 'local' cache implementation with the provided byte size for its config. " +
          `Please use '--cache-config' instead. The equivalent --cache-config CLI args would be: '--cache-config=local,size=${bytes}'`,
      ],
    };
  }
  return { options: parseCacheSettings(entries), warnings: [] };
}

function parseCacheSettings(entries: readonly string[]): Pick<ServerOptions, 'responseCacheBytes' | 'redisCache'> {
  const parsed = entries.map((entry) => {
    const comma = entry.indexOf(',');
    if (comma <= 0) throw badOption('cache-config', `No cache specified. --cache-config option format is <cache name>,<setting>=<value>. Got ${entry}`);
    const equals = entry.indexOf('=', comma + 1);
    const [cache, key, value] = [entry.slice(0, comma), entry.slice(comma + 1, equals), entry.slice(equals + 1)];
    if (equals < 0 || key === '' || value === '') {
      throw badOption('cache-config', `--cache-config option format is '<cache name>,<setting>=<value>'. Got ${entry}`);
    }
    return { entry, cache, key, value };
  });
  const caches = [...new Set(parsed.map(({ cache }) => cache))];
  if (caches.length > 1) {
    throw usageError(`found multiple cache configurations, but only a single cache is currently supported (got ${caches.join(' and ')}; give --cache-config for one of them)`);
  }
  const settings = new Map<string, string>();
  for (const { entry, cache, key, value } of parsed) {
    if (cache !== 'local' && cache !== 'redis') {
      throw usageError(`--cache-config '${entry}': unknown cache '${cache}'; Nereid has the local and redis caches (--cache-config local,size=BYTES)`);
    }
    const known = cache === 'local' ? ['size'] : ['host', 'port', 'user', 'password', 'db', 'connect_timeout', 'socket_timeout'];
    if (!known.includes(key)) throw usageError(`--cache-config '${entry}': unknown setting '${key}' of the ${cache} cache; it takes ${known.join(', ')}`);
    settings.set(key, value);
  }
  if (caches[0] === 'local') return { responseCacheBytes: parseInteger('cache-config local,size', settings.get('size'), 0, 1, Number.MAX_SAFE_INTEGER) };
  if (caches[0] === undefined) return {};
  const host = settings.get('host');
  const port = settings.get('port');
  if (host === undefined || port === undefined) {
    throw usageError(
      "Failed to initialize RedisCache, didn't specify address. Must at a minimum specify 'host' and 'port' in the configuration - e.g. tritonserver --cache-config redis,host=redis --cache-config redis,port=6379 --model-repository=/models ...",
    );
  }
  const optional = (key: string, name: keyof RedisCacheConfig, max: number): Partial<RedisCacheConfig> =>
    settings.has(key) ? { [name]: parseInteger(`cache-config redis,${key}`, settings.get(key), 0, 0, max) } : {};
  return {
    redisCache: {
      host,
      port: readPortAsTriton(port),
      ...(settings.has('user') ? { user: settings.get('user')! } : {}),
      ...(settings.has('password') ? { password: settings.get('password')! } : {}),
      ...optional('db', 'db', 2 ** 31 - 1),
      ...optional('connect_timeout', 'connectTimeoutMs', 2 ** 31 - 1),
      ...optional('socket_timeout', 'socketTimeoutMs', 2 ** 31 - 1),
    },
  };
}

/**
 * `--cache-config redis,port=P` read as Triton's redis_cache reads it, with atoi: its leading digits, 0
 * when there are none (`port=nonexistent` is port 0, and start-up then fails to connect, as Triton's
 * qa/L0_response_cache expects). Past 65535 no connection can be tried, so that is refused here.
 */
function readPortAsTriton(text: string): number {
  const port = Number(/^\s*\+?([0-9]+)/.exec(text)?.[1] ?? 0);
  if (port > 65535) throw usageError(`--cache-config redis,port takes a port from 0 to 65535, got '${text}'`);
  return port;
}

function parseRateLimit(value: string | undefined): ServerOptions['rateLimit'] {
  if (value === undefined) return DEFAULT_SERVER_OPTIONS.rateLimit;
  const mode = value.toLowerCase();
  if (mode !== 'off' && mode !== 'execution_count') throw usageError(`invalid argument for --rate-limit: takes off or execution_count, got '${value}'`);
  return mode;
}

/**
 * `--rate-limit-resource NAME:COUNT[:DEVICE]` read as Triton reads it (command_line_parser.cc
 * ParseRateLimiterResourceOption, ParseOption<int>), with its messages; DEVICE -1 is every device, as
 * without one. Beyond Triton: the name must not be empty, the count not negative.
 */
function parseRateLimitResource(entry: string): RateLimitResource {
  const parts = entry.split(':');
  if (parts.length < 2 || parts.length > 3 || parts[0] === '') {
    throw badOption('rate-limit-resource', `--rate-limit-resource option format is '<resource_name>:<count>:<device>' or '<resource_name>:<count>'. Got ${entry}`);
  }
  const [name, countText, deviceText] = parts as [string, string, string | undefined];
  const count = parseTritonInteger('rate-limit-resource', countText, INT32_MAX);
  const device = deviceText === undefined ? -1 : parseTritonInteger('rate-limit-resource', deviceText, INT32_MAX);
  if (count < 0) throw badOption('rate-limit-resource', `the count of resource '${name}' is ${count}; expected 0 or more. Got ${entry}`);
  if (device < -1) throw badOption('rate-limit-resource', `the device of resource '${name}' is ${device}; expected a device id, or -1 for every device. Got ${entry}`);
  return { name, count, ...(device !== -1 ? { device } : {}) };
}

const INT32_MAX = 2n ** 31n - 1n;

/** An error in one flag's value, framed as Triton frames it: `Bad option: "--FLAG".` and the reason on the next line. */
const badOption = (flag: string, message: string): NereidError => usageError(`Bad option: "--${flag}".\n${message}`);

/**
 * An integer read as Triton's ParseOption<int> / ParseOption<int64_t> reads one (std::stoi, std::stoll):
 * blanks, a sign and digits, whatever follows ignored; Triton's messages when there are no digits or the
 * value is past `max` (either way).
 */
function parseTritonInteger(flag: string, text: string, max: bigint): number {
  const digits = /^\s*([+-]?[0-9]+)/.exec(text)?.[1];
  if (digits === undefined) throw badOption(flag, `Invalid option value. Got ${text}`);
  const value = BigInt(digits);
  if (value > max || value < -max - 1n) throw badOption(flag, `Provided option value is out of bound. Got ${text}`);
  return Number(value);
}

/** A flag Triton reads with ParseIntBoolOption (--log-verbose): `true` is 1 and `false` 0, any case; other text as it is. */
function intBoolText(text: string | undefined): string | undefined {
  const lower = text?.toLowerCase();
  return lower === 'true' ? '1' : lower === 'false' ? '0' : text;
}

/**
 * Two services on one address and port cannot both listen, and with `--sagemaker-safe-port-range` every
 * other service on SageMaker's address must use a port in the range (Triton's CheckPortCollision: its
 * services, order, names and sentences). Port 0 picks a free port, which cannot collide.
 */
function checkPortCollision(options: ServerOptions): void {
  type Service = { readonly name: string; readonly address: string; readonly port: number; readonly range?: { readonly low: number; readonly high: number } };
  const services: Service[] = [
    ...(options.isHttpAllowed ? [{ name: 'HTTP', address: options.httpAddress, port: options.httpPort }] : []),
    ...(options.isGrpcAllowed ? [{ name: 'GRPC', address: options.grpcAddress, port: options.grpcPort }] : []),
    ...(options.isMetricsAllowed ? [{ name: 'metrics', address: options.metricsAddress ?? options.httpAddress, port: options.metricsPort }] : []),
    ...(options.sageMaker !== undefined
      ? [{ name: 'SageMaker', address: '0.0.0.0', port: options.sageMaker.port, ...(options.sageMaker.safePortRange !== undefined ? { range: options.sageMaker.safePortRange } : {}) }]
      : []),
    ...(options.vertexAi !== undefined ? [{ name: 'Vertex AI', address: '0.0.0.0', port: options.vertexAi.port }] : []),
  ];
  services.forEach((current, index) => {
    // A service with a range checks every other service; one without, those after it.
    for (const other of current.range !== undefined ? services : services.slice(index + 1)) {
      if (other === current || other.address !== current.address) continue;
      const { range } = current;
      if (range !== undefined && (other.port < range.low || other.port > range.high)) {
        throw usageError(`The server cannot listen to ${other.name} requests at port ${other.port}, allowed port range is [${range.low}, ${range.high}]`);
      }
      if (other.port !== 0 && other.port === current.port) {
        throw usageError(
          `The server cannot listen to ${current.name} requests and ${other.name} requests at the same address and port ${current.address}:${current.port}; give each service its own port`,
        );
      }
    }
  });
}
