import { type InferenceServer, NereidError } from '../../core/index.js';
import type { Logger } from '../../logging/logger.js';
import type { ServerMetrics } from '../../metrics/server-metrics.js';
import { type AccessPolicy, OPEN_ACCESS } from '../access-policy.js';
import { checkHttpAccess, headerValue } from '../http/access-check.js';
import { answerRoute } from '../http/answer-route.js';
import { handleHealth } from '../http/handlers/health.js';
import { type Reply, emptyReply } from '../http/reply.js';
import { type Route, matchRoute } from '../http/routes.js';
import type { SharedMemoryRegistry } from '../shared-memory/shared-memory-registry.js';
import { VERTEX_AI_BINARY_MIME } from '../json-header-size.js';
import { METHOD_NOT_ALLOWED, type ModelTarget, PlatformPort, type PlatformRequest } from '../platform-port.js';

/** The header that sends a predict request to another KServe v2 path, given without its leading '/'. */
const REDIRECT_HEADER = 'x-vertex-ai-triton-redirect';

/** What the Vertex AI environment and flags choose (config/vertex-ai-options.ts reads them). */
export interface VertexAiRoutes {
  /** AIP_PREDICT_ROUTE, a regular expression the whole path must match; '' where unset (the service then fails to start). */
  readonly predictRoute: string;
  /** AIP_HEALTH_ROUTE, as predictRoute. */
  readonly healthRoute: string;
  /** `--vertex-ai-default-model`; undefined: the repository's only ready model. */
  readonly defaultModel?: string;
}

export interface VertexAiFrontendOptions {
  readonly server: InferenceServer;
  readonly logger: Logger;
  readonly settings: VertexAiRoutes;
  /** `--http-max-input-size`: the largest request body accepted. */
  readonly maxInputBytes: number;
  /** What the `metrics` redirect serves; without it, that redirect is answered 400, as Triton's is with metrics off. */
  readonly metrics?: ServerMetrics;
  /** The system shared memory regions, shared with the other front ends. */
  readonly sharedMemory?: SharedMemoryRegistry;
  /** `--http-restricted-api` and `--auth-token-file`, as on the HTTP port. */
  readonly access?: AccessPolicy;
}

/** The error that stops the server from starting, in Triton's words (main.cc: LOG_TRITONSERVER_ERROR(err, "failed to start Vertex AI service")). */
const startFailure = (message: string): NereidError => new NereidError('INVALID_ARG', `failed to start Vertex AI service: Invalid argument - ${message}`);

/** AIP_PREDICT_ROUTE or AIP_HEALTH_ROUTE as a regular expression that the whole path must match (RE2::FullMatch). */
function fullMatch(variable: string, source: string): RegExp {
  try {
    return new RegExp(`^(?:${source})$`);
  } catch (error) {
    throw startFailure(`${variable} '${source}' is not a regular expression: ${(error as Error).message}`);
  }
}

/**
 * The route a redirect names, for the paths Triton's VertexAiAPIServer::Handle passes on: server and
 * model metadata, health, readiness, configuration, statistics, inference, the repository and shared
 * memory, each whatever method its path takes. Undefined for any other path (logging, trace settings,
 * generate), which is answered 400.
 */
function redirectRoute(path: string): Route | undefined {
  let route: Route;
  try {
    route = matchRoute('POST', path);
  } catch (error) {
    if (!(error instanceof NereidError) || error.reason !== 'METHOD_NOT_ALLOWED') return undefined;
    route = matchRoute('GET', path);
  }
  switch (route.kind) {
    case 'logging':
    case 'trace-setting':
      return undefined;
    case 'model':
      return route.action === 'generate' || route.action === 'generate_stream' ? undefined : route;
    default:
      return route;
  }
}

/**
 * Triton's Vertex AI front end (src/vertex_ai_server.cc), on a port of its own (platform-port.ts): the
 * health route (AIP_HEALTH_ROUTE) answers whether the server is ready; the predict route
 * (AIP_PREDICT_ROUTE) infers on the default model or, with an `X-Vertex-Ai-Triton-Redirect` header,
 * answers the KServe v2 path it names (and `metrics`). Anything else is answered 400 with an empty body,
 * as Triton's is.
 */
export class VertexAiFrontend {
  readonly #options: VertexAiFrontendOptions;
  readonly #predictRoute: RegExp;
  readonly #healthRoute: RegExp;
  readonly #defaultModel: Route & ModelTarget;
  /** The port it answers on: the server listens, waits for its requests and closes it there. */
  readonly port: PlatformPort;

  /**
   * Checks the routes and the default model as Triton's VertexAiAPIServer::Create does, in its order and
   * words: both routes must be set; without --vertex-ai-default-model the repository must hold exactly
   * one ready model version, and with it that model must be ready.
   */
  static create(options: VertexAiFrontendOptions): VertexAiFrontend {
    const { predictRoute, healthRoute, defaultModel } = options.settings;
    if (predictRoute === '') throw startFailure('API_PREDICT_ROUTE is not defined for Vertex AI endpoint');
    if (healthRoute === '') throw startFailure('AIP_HEALTH_ROUTE is not defined for Vertex AI endpoint');
    const ready = options.server.repositoryIndex(true);
    const readyList = ready.length === 0 ? 'none' : ready.map((entry) => `'${entry.name}' version ${entry.version}`).join(', ');
    let modelName: string;
    if (defaultModel === undefined) {
      if (ready.length !== 1) {
        throw startFailure(
          `Expect the model repository contains only a single model if default model is not specified (ready: ${readyList}; name one with --vertex-ai-default-model)`,
        );
      }
      modelName = ready[0]!.name;
    } else {
      if (!ready.some((entry) => entry.name === defaultModel)) throw startFailure(`Expect the default model '${defaultModel}' is loaded (ready: ${readyList})`);
      modelName = defaultModel;
    }
    return new VertexAiFrontend(options, fullMatch('AIP_PREDICT_ROUTE', predictRoute), fullMatch('AIP_HEALTH_ROUTE', healthRoute), modelName);
  }

  private constructor(options: VertexAiFrontendOptions, predictRoute: RegExp, healthRoute: RegExp, modelName: string) {
    this.#options = options;
    this.#predictRoute = predictRoute;
    this.#healthRoute = healthRoute;
    this.#defaultModel = { kind: 'model', action: 'infer', modelName, modelVersion: undefined };
    this.port = new PlatformPort({ ...options, platform: 'Vertex AI' }, (request) => this.#answer(request));
  }

  /** The model the predict route infers on. */
  get defaultModel(): string {
    return this.#defaultModel.modelName;
  }

  async #answer(request: PlatformRequest): Promise<Reply> {
    const { req, path } = request;
    const { server, sharedMemory } = this.#options;
    const access = this.#options.access ?? OPEN_ACCESS;
    const method = req.method ?? 'GET';
    if (this.#healthRoute.test(path)) {
      checkHttpAccess({ kind: 'health', check: 'ready' }, req.headers, access);
      return method === 'GET' ? handleHealth(server, 'ready') : METHOD_NOT_ALLOWED;
    }
    if (!this.#predictRoute.test(path)) return emptyReply(400);
    const redirect = headerValue(req.headers, REDIRECT_HEADER);
    if (redirect === undefined) {
      checkHttpAccess(this.#defaultModel, req.headers, access);
      if (method !== 'POST') return METHOD_NOT_ALLOWED;
      return this.port.infer(request, this.#defaultModel, VERTEX_AI_BINARY_MIME);
    }
    this.#options.logger.verbose(1, 'server', `Redirecting Vertex AI request: /${redirect}`);
    if (method !== 'POST') return emptyReply(405);
    if (redirect === 'metrics') {
      access.authToken?.check(headerValue(req.headers, 'authorization'));
      return this.#metrics();
    }
    const route = redirectRoute(`/${redirect}`);
    if (route === undefined) return emptyReply(400);
    checkHttpAccess(route, req.headers, access);
    if (route.kind === 'model' && route.action === 'infer') return this.port.infer(request, route, VERTEX_AI_BINARY_MIME);
    return answerRoute(route, { server, sharedMemory, method, readBody: () => this.port.readBody(req) });
  }

  /** The `metrics` redirect: the Prometheus text, or 400 with an empty body when it cannot be had (Triton's HandleMetrics). */
  async #metrics(): Promise<Reply> {
    const { metrics, logger } = this.#options;
    if (metrics === undefined) return emptyReply(400);
    try {
      return { status: 200, headers: { 'content-type': metrics.registry.contentType }, chunks: [Buffer.from(await metrics.text())] };
    } catch (error) {
      logger.error('server', `Vertex AI: collecting metrics failed: ${(error as Error).stack ?? String(error)}`);
      return emptyReply(400);
    }
  }
}
