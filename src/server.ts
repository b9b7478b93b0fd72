import { readFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { availableParallelism } from 'node:os';
import { DEFAULT_SERVER_OPTIONS, type ServerOptions } from './config/server-options.js';
import type { TlsFiles, TlsService } from './config/tls-flags.js';
import { InferenceServer, type ModelControl, NereidError, RequestRouter, TraceManager, loadOpenTelemetryTracer } from './core/index.js';
import { AuthToken } from './frontends/auth-token.js';
import { GrpcFrontend } from './frontends/grpc/grpc-server.js';
import { HttpFrontend } from './frontends/http/http-server.js';
import { isLoopbackAddress, startService } from './frontends/listen.js';
import { MetricsFrontend } from './frontends/metrics/metrics-server.js';
import { chooseRegionMemoryProvider } from './frontends/shared-memory/region-memory.js';
import { SharedMemoryRegistry } from './frontends/shared-memory/shared-memory-registry.js';
import { TlsIdentity } from './frontends/tls-identity.js';
import type { PlatformPort } from './frontends/platform-port.js';
import { SageMakerFrontend } from './frontends/sagemaker/sagemaker-server.js';
import { VertexAiFrontend } from './frontends/vertex-ai/vertex-ai-server.js';
import { type Logger, createLogger } from './logging/logger.js';
import { RecentLogLines } from './logging/recent-log-lines.js';
import { ServerMetrics } from './metrics/server-metrics.js';
import type { ModelId } from './kernel/model-id.js';
import type { ModelMetricSettings } from './metrics/model-statistics.js';
import { RepositoryManager } from './repository/repository-manager.js';
import { RateLimiter } from './scheduling/rate-limiter.js';
import { RedisCache, withEnvironmentCredentials } from './scheduling/redis-cache.js';
import { ResponseCache, type ResponseCacheStore } from './scheduling/response-cache.js';
import { openRepositories } from './repository/storage/remote-repositories.js';

const PACKAGE_VERSION = (JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }).version;

function urlOf(address: AddressInfo, tls: TlsIdentity | undefined): string {
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address === '0.0.0.0' ? '127.0.0.1' : address.address;
  return `${tls !== undefined ? 'https' : 'http'}://${host}:${address.port}`;
}

/** What the start-up line adds for a service over TLS. */
function tlsNote(tls: TlsIdentity | undefined, url: string): string {
  if (tls === undefined) return '';
  return ` over TLS (${url}${tls.isMutual ? ', client certificates required' : ''})`;
}

/** Where the Vertex AI and SageMaker front ends listen, as Triton's: every interface. */
const PLATFORM_ADDRESS = '0.0.0.0';

const TLS_SERVICE_NAMES: Record<TlsService, string> = { grpc: 'gRPC', http: 'HTTP', metrics: 'metrics' };

/** Reads and checks one service's TLS files, or undefined without TLS; throws INVALID_ARG naming the flag and file. */
function loadTlsIdentity(service: TlsService, files: TlsFiles | undefined, logger: Logger): Promise<TlsIdentity> | undefined {
  return files === undefined ? undefined : TlsIdentity.load({ ...files, serviceName: TLS_SERVICE_NAMES[service], flagPrefix: service, logger });
}

export interface RunningServer {
  readonly core: InferenceServer;
  /** `http://host:port` (`https://` over TLS), undefined when HTTP is off. */
  readonly httpUrl: string | undefined;
  /** `host:port` of the gRPC service, undefined when gRPC is off. */
  readonly grpcUrl: string | undefined;
  /** `http://host:port` (`https://` over TLS) of /metrics, undefined when metrics are off. */
  readonly metricsUrl: string | undefined;
  /** `http://host:port` of the Vertex AI front end, undefined when it is off. */
  readonly vertexAiUrl: string | undefined;
  /** `http://host:port` of the SageMaker front end, undefined when it is off. */
  readonly sageMakerUrl: string | undefined;
  readonly logger: Logger;
  /** Whether any service listens over TLS (`nereid serve` then reloads the certificates on SIGHUP). */
  readonly hasTls: boolean;
  /** The system shared memory regions clients registered (`--allow-client-shm`). */
  readonly sharedMemory: SharedMemoryRegistry;
  /**
   * Reads every TLS service's certificate files again, as a change of the files does; a service whose
   * new files cannot be used keeps its certificate (an error is logged). Resolves true when all reloaded.
   */
  reloadCertificates(): Promise<boolean>;
  /**
   * Graceful stop: readiness turns false and new requests are refused; requests in flight complete
   * within `exitTimeoutMs`; then connections close and every model unloads.
   */
  shutdown(): Promise<void>;
}

/** The start-up recommendation of `--auth-token-file` for a service that other machines can reach. */
function warnIfExposed(logger: Logger, service: 'HTTP' | 'gRPC' | 'Vertex AI' | 'SageMaker', address: string, authToken: AuthToken | undefined): void {
  if (authToken !== undefined || isLoopbackAddress(address)) return;
  logger.warning(
    'server',
    `the ${service} service listens on ${address}, which other machines can reach, and asks for no token: anyone who can reach the port can infer, load and unload models; start with --auth-token-file=FILE (and see --http-restricted-api, --grpc-restricted-protocol), or listen on 127.0.0.1`,
  );
}

/**
 * The response cache `--cache-config` asks for, or undefined. Redis is connected to before any model
 * loads, with TRITONCACHE_REDIS_USERNAME and TRITONCACHE_REDIS_PASSWORD where the flags give no user or
 * password; when it cannot be reached the server fails to start, as Triton's does.
 */
async function createResponseCache(options: ServerOptions, logger: Logger): Promise<ResponseCacheStore | undefined> {
  if (options.responseCacheBytes !== undefined) {
    return new ResponseCache(options.responseCacheBytes, { onInsertFailure: (message) => logger.error('cache', message) });
  }
  if (options.redisCache === undefined) return undefined;
  const cache = new RedisCache({ ...withEnvironmentCredentials(options.redisCache, process.env), onError: (message) => logger.error('cache', message) });
  await cache.connect();
  logger.info('cache', `using the redis cache at ${options.redisCache.host}:${options.redisCache.port}`);
  return cache;
}

/** Options for `startServer`: the repositories plus any ServerOptions to change from Triton's defaults. */
export type StartOptions = Partial<ServerOptions> & { readonly modelRepositories: readonly string[]; readonly logger?: Logger };

/** The composition root: loads the repositories, builds the core, starts the front ends. */
export async function startServer(startOptions: StartOptions): Promise<RunningServer> {
  const options: ServerOptions = { ...DEFAULT_SERVER_OPTIONS, ...startOptions };
  // Issue 17, the dashboard shows a model's recent log lines: kept only when it is served.
  const recentLogLines = options.isHttpAllowed && options.isDashboardAllowed ? new RecentLogLines() : undefined;
  const baseLogger = startOptions.logger ?? createLogger(options.log);
  const logger = recentLogLines?.record(baseLogger) ?? baseLogger;
  // Issue 23: the Triton flags given that have no effect here.
  for (const warning of options.startupWarnings) logger.warning('server', warning);
  // Issue 24, restricted APIs and token authentication: read before any model loads, so a bad file fails at once.
  const authToken = options.authTokenFile !== undefined ? await AuthToken.fromFile(options.authTokenFile) : undefined;
  // Issue 24, TLS: every certificate is read and checked before any model loads or any port listens.
  const [httpTls, grpcTls, metricsTls] = await Promise.all([
    options.isHttpAllowed ? loadTlsIdentity('http', options.httpTls, logger) : undefined,
    options.isGrpcAllowed ? loadTlsIdentity('grpc', options.grpcTls, logger) : undefined,
    options.isMetricsAllowed ? loadTlsIdentity('metrics', options.metricsTls, logger) : undefined,
  ]);
  const tlsIdentities = [httpTls, grpcTls, metricsTls].filter((identity) => identity !== undefined);
  // Issue 16, the response cache and the rate limiter: one of each for the whole server, as in Triton.
  const responseCache = await createResponseCache(options, logger);
  const rateLimiter = options.rateLimit === 'execution_count' ? new RateLimiter({ declared: options.rateLimitResources }) : undefined;
  const metrics: ServerMetrics | undefined = options.isMetricsAllowed
    ? new ServerMetrics({
        config: options.metricsConfig,
        // Read at scrape time only, once the repository below exists.
        source: {
          models: () => repository.readyModels(),
          loadedModelCount: () => repository.loadedModelCount,
          memoryEstimates: () => repository.memoryEstimates(),
          ...(responseCache !== undefined ? { responseCache: () => responseCache.statistics() } : {}),
        },
        cpuIntervalMs: options.isCpuMetricsAllowed ? options.metricsIntervalMs : 0,
      })
    : undefined;
  // Models calling models and the front ends share one router; it finds models in the repository below.
  const router = new RequestRouter({
    prepare: (name) => repository.prepareModel(name),
    lookup: (name, version) => repository.getModel(name, version),
    lookupNow: (name, version) => repository.getModelNow(name, version),
  });
  // Models load and unload models through the core (its checks and messages), which exists once the
  // startup models have loaded: Triton's model loading API is for after startup too.
  const modelControlTarget: { core?: InferenceServer } = {};
  const controlTarget = (): InferenceServer => {
    if (modelControlTarget.core === undefined) throw new NereidError('UNAVAILABLE', 'the model loading API is not available while the server starts: call it once the server is up (not from a startup model\'s initialize)');
    return modelControlTarget.core;
  };
  const modelControl: ModelControl = {
    loadModel: (name, parameters) => controlTarget().loadModel(name, parameters),
    unloadModel: (name, unloadOptions) => controlTarget().unloadModel(name, unloadOptions),
    isModelReady: (name, version) => controlTarget().isModelReady(name, version),
  };
  // Issue 18: object-storage repositories are copied into local folders before any model loads.
  const repositories = await openRepositories(options.modelRepositories, { logger, env: process.env }).catch((error: unknown) => {
    metrics?.close();
    throw error;
  });
  const repository: RepositoryManager = new RepositoryManager({
    repositoryPaths: repositories.paths,
    repositoryNamespaces: options.modelRepositories,
    isModelNamespacing: options.isModelNamespacing,
    ...(repositories.sync !== undefined ? { syncRepositories: repositories.sync } : {}),
    controlMode: options.modelControlMode,
    startupModels: options.startupModels,
    unloadTimeoutMs: options.modelUnloadTimeoutMs,
    // Issue 24, item 8 (a model cannot stop the server):
    loadTimeoutMs: options.modelLoadTimeoutMs,
    maxInputBytes: options.httpMaxInputBytes,
    isAutoCompleteEnabled: options.isAutoCompleteEnabled,
    isModelCodeUploadAllowed: options.isModelCodeUploadAllowed,
    // Issue 19, many models:
    loadThreadCount: options.modelLoadThreadCount,
    loadRetryCount: options.modelLoadRetryCount,
    ...(options.modelConfigName !== undefined ? { modelConfigName: options.modelConfigName } : {}),
    isLoadOnDemand: options.isLoadOnDemand,
    limits: {
      ...(options.maxLoadedModels !== undefined ? { maxLoadedModels: options.maxLoadedModels } : {}),
      ...(options.modelMemoryBudgetBytes !== undefined ? { memoryBudgetBytes: options.modelMemoryBudgetBytes } : {}),
    },
    ...(metrics !== undefined ? { events: metrics.repositoryEvents } : {}),
    ...(responseCache !== undefined ? { responseCache } : {}),
    ...(rateLimiter !== undefined ? { rateLimiter } : {}),
    context: {
      logger,
      defaultMaxBatchSize: options.defaultMaxBatchSize,
      cpuCount: availableParallelism(),
      onnxExecutionThreadCount: options.onnxExecutionThreadCount || availableParallelism(),
      caller: router,
      ...(metrics !== undefined ? { customMetrics: metrics.customMetrics } : {}),
      modelControl,
    },
    logger,
    ...(metrics !== undefined
      ? { observerFor: (model: ModelId, version: number, settings: ModelMetricSettings) => metrics.observerFor(model, version, settings) }
      : {}),
  });
  await repository.loadAll();
  if (options.modelControlMode === 'poll') repository.startPolling(options.repositoryPollMs);
  /** Undoes what starting did so far, before the server fails to start. */
  const abandonStart = async (): Promise<void> => {
    await repository.unloadAll();
    metrics?.close();
    await responseCache?.close();
    await repositories.close();
  };
  const failed = repository.failures();
  if (options.isExitOnError && failed.length > 0) {
    await abandonStart();
    // Triton's words (core ModelRepositoryManager::Create, then main's "error: creating server: Internal - "), then which and why.
    throw new NereidError(
      'UNAVAILABLE',
      `error: creating server: Internal - failed to load all models (${failed.length} model(s) failed to load: ${failed.map((entry) => `'${entry.name}' (${entry.reason})`).join('; ')}; --exit-on-error=false serves the others)`,
    );
  }
  const core = new InferenceServer({
    repository,
    router,
    id: options.id,
    version: PACKAGE_VERSION,
    isStrictReadiness: options.isStrictReadiness,
    logger,
    isLogFileUpdateAllowed: options.isLogFileUpdateAllowed,
    isSharedMemoryServed: options.isClientShmAllowed,
    // Issue 23, the trace extension:
    traceManager: new TraceManager({
      initial: options.traceSettings,
      logger,
      ...(options.openTelemetry !== undefined ? { openTelemetry: await loadOpenTelemetryTracer(options.openTelemetry, logger) } : {}),
    }),
  });
  modelControlTarget.core = core;
  // Issue 13, the system shared memory extension: one registry for every front end.
  const memoryChoice = chooseRegionMemoryProvider();
  const sharedMemory = new SharedMemoryRegistry({ provider: memoryChoice.provider, isAllowed: options.isClientShmAllowed });
  const memoryPath =
    memoryChoice.fallbackReason === undefined
      ? 'regions are mapped by the native addon'
      : `regions are read and written as files under /dev/shm (a copy each way), because ${memoryChoice.fallbackReason}`;
  logger.info('server', `system shared memory: ${memoryPath}${options.isClientShmAllowed ? '' : '; clients may not register regions (--allow-client-shm=false)'}`);
  // Triton's Vertex AI front end: its routes and default model are checked before any port listens.
  let vertexAi: VertexAiFrontend | undefined;
  if (options.vertexAi !== undefined) {
    try {
      vertexAi = VertexAiFrontend.create({
        server: core,
        logger,
        settings: options.vertexAi,
        maxInputBytes: options.httpMaxInputBytes,
        access: { restrictedFeatures: options.httpRestrictedApis, authToken },
        sharedMemory,
        ...(metrics !== undefined ? { metrics } : {}),
      });
    } catch (error) {
      sharedMemory.close();
      await abandonStart();
      throw error;
    }
  }

  let http: HttpFrontend | undefined;
  let httpUrl: string | undefined;
  if (options.isHttpAllowed) {
    http = new HttpFrontend({
      server: core,
      logger,
      maxInputBytes: options.httpMaxInputBytes,
      access: { restrictedFeatures: options.httpRestrictedApis, authToken },
      corsOrigins: options.httpCorsOrigins,
      sharedMemory,
      ...(options.httpHeaderForwardPattern !== undefined ? { headerForwardPattern: options.httpHeaderForwardPattern } : {}),
      ...(httpTls !== undefined ? { tls: httpTls } : {}),
      ...(recentLogLines !== undefined
        ? { dashboard: { server: core, controlMode: options.modelControlMode, recentLogLines, ...(metrics !== undefined ? { metricsRegistry: metrics.registry } : {}) } }
        : {}),
    });
    const address = await startService('HTTP', options.httpAddress, options.httpPort, () => http!.listen(options.httpPort, options.httpAddress));
    httpUrl = urlOf(address, httpTls);
    logger.info('server', `Started HTTPService at ${options.httpAddress}:${address.port}${tlsNote(httpTls, httpUrl)}`);
    warnIfExposed(logger, 'HTTP', options.httpAddress, authToken);
  }
  let grpc: GrpcFrontend | undefined;
  let grpcUrl: string | undefined;
  if (options.isGrpcAllowed) {
    grpc = new GrpcFrontend({
      server: core,
      logger,
      maxMessageBytes: options.grpcMaxMessageBytes,
      maxDecompressedMessageBytes: options.grpcMaxDecompressedMessageBytes,
      keepaliveTimeMs: options.grpcKeepaliveTimeMs,
      keepaliveTimeoutMs: options.grpcKeepaliveTimeoutMs,
      isKeepalivePermittedWithoutCalls: options.isGrpcKeepalivePermittedWithoutCalls,
      http2MaxPingStrikes: options.grpcHttp2MaxPingStrikes,
      http2MinPingIntervalWithoutDataMs: options.grpcHttp2MinRecvPingIntervalWithoutDataMs,
      access: { restrictedFeatures: options.grpcRestrictedProtocols, authToken },
      sharedMemory,
      ...(options.grpcHeaderForwardPattern !== undefined ? { headerForwardPattern: options.grpcHeaderForwardPattern } : {}),
      ...(grpcTls !== undefined ? { tls: grpcTls } : {}),
    });
    const port = await startService('GRPC', options.grpcAddress, options.grpcPort, () => grpc!.listen(options.grpcPort, options.grpcAddress));
    grpcUrl = `${options.grpcAddress === '0.0.0.0' ? '127.0.0.1' : options.grpcAddress}:${port}`;
    logger.info('server', `Started GRPCInferenceService at ${options.grpcAddress}:${port}${tlsNote(grpcTls, grpcUrl)}`);
    warnIfExposed(logger, 'gRPC', options.grpcAddress, authToken);
  }
  /** A platform's port listening on every interface, with Triton's start-up line (`logName` as Triton spells it); its URL. */
  const listenPlatform = async (port: PlatformPort, portNumber: number, service: 'Vertex AI' | 'SageMaker', logName: string, note: string): Promise<string> => {
    const address = await startService(service, PLATFORM_ADDRESS, portNumber, () => port.listen(portNumber, PLATFORM_ADDRESS));
    logger.info('server', `Started ${logName} HTTPService at ${PLATFORM_ADDRESS}:${address.port}${note}`);
    warnIfExposed(logger, service, PLATFORM_ADDRESS, authToken);
    return urlOf(address, undefined);
  };
  let sageMaker: SageMakerFrontend | undefined;
  let sageMakerUrl: string | undefined;
  if (options.sageMaker !== undefined) {
    sageMaker = new SageMakerFrontend({
      server: core,
      logger,
      endpoint: options.sageMaker,
      maxInputBytes: options.httpMaxInputBytes,
      access: { restrictedFeatures: options.httpRestrictedApis, authToken },
      sharedMemory,
    });
    sageMakerUrl = await listenPlatform(sageMaker.port, options.sageMaker.port, 'SageMaker', 'Sagemaker', '');
  }
  const vertexAiUrl =
    vertexAi === undefined ? undefined : await listenPlatform(vertexAi.port, options.vertexAi!.port, 'Vertex AI', 'Vertex AI', ` (default model '${vertexAi.defaultModel}')`);
  let metricsFrontend: MetricsFrontend | undefined;
  let metricsUrl: string | undefined;
  if (metrics !== undefined) {
    metricsFrontend = new MetricsFrontend(metrics, logger, metricsTls);
    const metricsAddress = options.metricsAddress ?? options.httpAddress;
    const address = await startService('Metrics', metricsAddress, options.metricsPort, () => metricsFrontend!.listen(options.metricsPort, metricsAddress));
    metricsUrl = urlOf(address, metricsTls);
    logger.info('server', `Started Metrics Service at ${metricsAddress}:${address.port}${tlsNote(metricsTls, metricsUrl)}`);
  }
  for (const identity of tlsIdentities) identity.watch();
  const reloadCertificates = async (): Promise<boolean> => (await Promise.all(tlsIdentities.map((identity) => identity.reload()))).every(Boolean);

  let stopping: Promise<void> | undefined;
  const shutdown = (): Promise<void> =>
    (stopping ??= (async () => {
      core.beginShutdown();
      const closed = Promise.all([http?.close(), grpc?.close(), vertexAi?.port.close(), sageMaker?.port.close()]);
      const deadline = Date.now() + options.exitTimeoutMs;
      // Front-end requests count until answered: a body still being read, or a SageMaker load or unload.
      const frontEndInflight = (): number => (http?.inflightCount ?? 0) + (vertexAi?.port.inflightCount ?? 0) + (sageMaker?.port.inflightCount ?? 0);
      while ((core.inflightCount > 0 || frontEndInflight() > 0) && Date.now() < deadline) {
        logger.info('server', `waiting for ${core.inflightCount} in-flight inference request(s) to complete; ${Math.ceil((deadline - Date.now()) / 1000)} s left`);
        await new Promise((resolve) => setTimeout(resolve, Math.min(500, Math.max(1, deadline - Date.now()))));
      }
      const isTimedOut = core.inflightCount > 0 || frontEndInflight() > 0;
      if (isTimedOut) logger.warning('server', `exit timeout reached with ${core.inflightCount} request(s) still in flight; stopping anyway`);
      http?.closeAllConnections();
      vertexAi?.port.closeAllConnections();
      sageMaker?.port.closeAllConnections();
      grpc?.forceClose();
      await closed;
      sharedMemory.close();
      await core.unloadAll({ isForced: isTimedOut });
      await core.flushTraces();
      await repositories.close();
      await metricsFrontend?.close();
      metrics?.close();
      await responseCache?.close();
      for (const identity of tlsIdentities) identity.close();
      logger.info('server', 'all models are stopped; exiting');
    })());
  return { core, httpUrl, grpcUrl, metricsUrl, vertexAiUrl, sageMakerUrl, logger, hasTls: tlsIdentities.length > 0, sharedMemory, reloadCertificates, shutdown };
}
