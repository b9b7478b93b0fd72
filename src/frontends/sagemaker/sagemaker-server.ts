import { type InferenceServer, NereidError } from '../../core/index.js';
import type { Logger } from '../../logging/logger.js';
import { type AccessPolicy, OPEN_ACCESS } from '../access-policy.js';
import { checkHttpAccess, headerValue } from '../http/access-check.js';
import { handleGenerate, handleGenerateStream } from '../http/handlers/generate.js';
import { handleHealth } from '../http/handlers/health.js';
import { type Reply, emptyReply, jsonReply } from '../http/reply.js';
import { parseRequestJson } from '../http/request-json.js';
import { SAGEMAKER_BINARY_MIME } from '../json-header-size.js';
import { METHOD_NOT_ALLOWED, type ModelTarget, PlatformPort, type PlatformRequest } from '../platform-port.js';
import type { SharedMemoryRegistry } from '../shared-memory/shared-memory-registry.js';
import { checkInsideRoot, findMmeFolder, normalizeLoadUrl } from './mme-folder.js';
import { joinBody } from '../http/join-body.js';

/** The multi-model endpoint's routes (Triton's regex, matched on the whole path): `/models`, `/models/<name>`, `/models/<name>/invoke`. */
const MODELS_PATH = /^\/models(?:\/)?([^/]+)?(\/invoke)?$/;

/** The header that names the model a multi-model endpoint's request is for, in place of the path's. */
const TARGET_MODEL_HEADER = 'x-amzn-sagemaker-target-model';

/** What a repository route's access check sees (the model-repository category). */
const REPOSITORY_ROUTE = { kind: 'repository-index' } as const;

/**
 * Texts that make a multi-model endpoint's failed load or invoke a 507, which tells SageMaker to unload
 * models and retry (Triton's SageMakerMMECheckOOMError).
 */
const OUT_OF_MEMORY_TEXTS = [
  'CUDA out of memory',
  'CUDA_OUT_OF_MEMORY',
  'Out of memory',
  'Out Of Memory',
  'out of memory',
  'MemoryError',
  'OutOfMemory',
  'OOM',
  'Dst tensor is not initialized',
  'Src tensor is not initialized',
  'CNMEM_STATUS_OUT_OF_MEMORY',
  'CUDNN_STATUS_NOT_INITIALIZED',
  'CUBLAS_STATUS_ALLOC_FAILED',
  'CUBLAS_STATUS_NOT_INITIALIZED',
  'Failed to allocate memory',
  'failed to allocate memory',
  'No space left on device',
];

/** A multi-model endpoint's error: `{"error": ...}`, 507 when it says memory ran out, else 400 (Triton's SageMakerMMEHandleOOMError). */
function mmeErrorReply(error: unknown): Reply {
  if (!(error instanceof NereidError)) throw error;
  const isOutOfMemory = OUT_OF_MEMORY_TEXTS.some((text) => error.message.includes(text));
  return jsonReply({ error: error.message }, isOutOfMemory ? 507 : 400);
}

/**
 * A reply with binary outputs carries its JSON's length in SageMaker's Content-Type, not in
 * Inference-Header-Content-Length (Triton's SagemakerAPIServer SetResponseHeader).
 */
function withSageMakerContentType(reply: Reply): Reply {
  const length = reply.headers?.['inference-header-content-length'];
  if (length === undefined) return reply;
  const { 'inference-header-content-length': _, ...headers } = reply.headers!;
  return { ...reply, headers: { ...headers, 'content-type': `${SAGEMAKER_BINARY_MIME}${String(length)}` } };
}

/** What the SAGEMAKER_TRITON_* environment chooses (config/sagemaker-options.ts reads it). */
export interface SageMakerEndpoint {
  /** The model /invocations infers on. */
  readonly defaultModel: string;
  /** infer, generate or generate_stream; anything else is refused per request. */
  readonly inferenceType: string;
  /** `live`: /ping answers liveness; anything else, readiness. */
  readonly pingMode: string;
  /** The folder the multi-model endpoint loads models from (mme-folder.ts checkInsideRoot). */
  readonly mmeRoot: string;
}

export interface SageMakerFrontendOptions {
  readonly server: InferenceServer;
  readonly logger: Logger;
  readonly endpoint: SageMakerEndpoint;
  /** `--http-max-input-size`: the largest request body accepted. */
  readonly maxInputBytes: number;
  readonly sharedMemory?: SharedMemoryRegistry;
  /** `--http-restricted-api` and `--auth-token-file`, as on the HTTP port. */
  readonly access?: AccessPolicy;
}

/**
 * Triton's SageMaker front end (src/sagemaker_server.cc) on a port of its own (platform-port.ts):
 * `GET /ping` answers readiness (or liveness); `POST /invocations` infers on SAGEMAKER_TRITON_DEFAULT_MODEL_NAME
 * (or generates, per SAGEMAKER_TRITON_INFERENCE_TYPE); and the multi-model endpoint loads a model from a
 * folder (`POST /models`), lists (`GET /models`), describes (`GET /models/<name>`), invokes
 * (`POST /models/<name>/invoke`) and unloads (`DELETE /models/<name>`) them. Any other request is
 * answered 400 with an empty body, as Triton's is.
 */
export class SageMakerFrontend {
  readonly #options: SageMakerFrontendOptions;
  /** The port it answers on: the server listens, waits for its requests and closes it there. */
  readonly port: PlatformPort;
  /** The multi-model endpoint's models: the name SageMaker gave each load → the repository registered for it. */
  readonly #models = new Map<string, string>();
  /** Names a load or an unload is working on: another load or unload of one waits for nothing and is refused. */
  readonly #busy = new Set<string>();

  constructor(options: SageMakerFrontendOptions) {
    this.#options = options;
    this.port = new PlatformPort({ ...options, platform: 'SageMaker' }, (request) => this.#answer(request));
  }

  async #answer(request: PlatformRequest): Promise<Reply> {
    const { req, path } = request;
    const { server, endpoint } = this.#options;
    const access = this.#options.access ?? OPEN_ACCESS;
    const method = req.method ?? 'GET';
    if (path === '/ping') {
      checkHttpAccess({ kind: 'health', check: 'ready' }, req.headers, access);
      return method === 'GET' ? handleHealth(server, endpoint.pingMode === 'live' ? 'live' : 'ready') : METHOD_NOT_ALLOWED;
    }
    if (path === '/invocations') {
      const target = { kind: 'model', action: 'infer', modelName: endpoint.defaultModel, modelVersion: undefined } as const;
      checkHttpAccess(target, req.headers, access);
      if (method !== 'POST') return METHOD_NOT_ALLOWED;
      return this.#invocations(request, target);
    }
    const match = MODELS_PATH.exec(path);
    if (match === null) return emptyReply(400);
    const [, name = '', action = ''] = match;
    const targetModel = headerValue(req.headers, TARGET_MODEL_HEADER);
    switch (method) {
      case 'GET':
        checkHttpAccess(REPOSITORY_ROUTE, req.headers, access);
        return name === '' ? this.#list() : this.#describe(name);
      case 'POST':
        if (action === '/invoke') {
          access.authToken?.check(headerValue(req.headers, 'authorization'));
          return this.#invoke(request, name, targetModel ?? name);
        }
        checkHttpAccess(REPOSITORY_ROUTE, req.headers, access);
        return this.#load(request, targetModel);
      case 'DELETE':
        checkHttpAccess(REPOSITORY_ROUTE, req.headers, access);
        return this.#unload(name, targetModel ?? name);
      default:
        return emptyReply(400);
    }
  }

  /** `POST /invocations`: inference, or the generate extension, on the default model. */
  async #invocations(request: PlatformRequest, target: ModelTarget): Promise<Reply> {
    const { server, endpoint } = this.#options;
    switch (endpoint.inferenceType) {
      case 'infer':
        return withSageMakerContentType(await this.port.infer(request, target, SAGEMAKER_BINARY_MIME));
      case 'generate':
      case 'generate_stream': {
        const generate = endpoint.inferenceType === 'generate' ? handleGenerate : handleGenerateStream;
        return this.port.traced(request, target, (chunks, size, trace) =>
          generate(server, target, joinBody(chunks, size, {}), { trace, signal: request.signal, forwarded: undefined }),
        );
      }
      default:
        return jsonReply({ error: `Server has invalid inference type '${endpoint.inferenceType}'. Must be one of: infer, generate, generate_stream.` }, 400);
    }
  }

  /** `GET /models`: each loaded model's name and repository; one no longer ready is listed as `{}`, as Triton lists it. */
  #list(): Reply {
    const models = [...this.#models].map(([name, repository]) => (this.#options.server.isModelReady(name, 1) ? { modelName: name, modelUrl: repository } : {}));
    return jsonReply({ models });
  }

  /** `GET /models/<name>`: 404 with an empty body for a model the endpoint did not load. */
  #describe(name: string): Reply {
    const repository = this.#models.get(name);
    return repository === undefined ? emptyReply(404) : jsonReply({ modelName: name, modelUrl: repository });
  }

  /**
   * `POST /models` with `{"model_name", "url"}`: registers the model's folder as a repository (the
   * model known as X-Amzn-SageMaker-Target-Model, or model_name) and loads it. 409 when that repository
   * or name is registered already; a failed load unregisters it and answers 507 when memory ran out.
   */
  async #load(request: PlatformRequest, targetModel: string | undefined): Promise<Reply> {
    const { server, logger } = this.#options;
    const body = parseRequestJson((await this.port.readBody(request.req)).toString('utf8'), 'load request');
    const fields = body !== null && typeof body === 'object' && !Array.isArray(body) ? body : {};
    const { model_name: modelName = '', url = '' } = fields as { model_name?: unknown; url?: unknown };
    if (typeof modelName !== 'string' || typeof url !== 'string') {
      throw new NereidError('INVALID_ARG', `the load request's 'model_name' and 'url' must be strings`);
    }
    const folder = normalizeLoadUrl(url);
    if (folder === undefined) {
      logger.error('server', `Invalid URL: ${url}. "url" property value cannot start with /dev/, /proc/, or /sys/.`);
      return emptyReply(400);
    }
    const target = targetModel ?? modelName;
    if (this.#busy.has(modelName)) return jsonReply({ error: `model '${modelName}' is being loaded or unloaded by the multi-model endpoint` }, 409);
    logger.info('server', `Loading SageMaker TargetModel: ${target}`);
    this.#busy.add(modelName);
    try {
      let repository: string;
      try {
        const found = await findMmeFolder(folder);
        // The repository is what the server reads from: it, not only the folder named, stays below the root.
        await checkInsideRoot(found.repository, this.#options.endpoint.mmeRoot);
        repository = found.repository;
        await server.registerModelRepository(repository, new Map([[target, found.subfolder]]));
      } catch (error) {
        if (error instanceof NereidError && error.status === 'ALREADY_EXISTS') return jsonReply({ error: error.message }, 409);
        return mmeErrorReply(error);
      }
      const loaded = this.#models.get(modelName);
      if (loaded !== undefined) {
        server.unregisterModelRepository(repository);
        return jsonReply({ error: `model '${modelName}' is already loaded by the multi-model endpoint, from '${loaded}'; unload it first` }, 409);
      }
      try {
        await server.loadModel(target);
      } catch (error) {
        // As Triton's: a model that exists already keeps the registration and answers 409.
        if (error instanceof NereidError && error.status === 'ALREADY_EXISTS') return jsonReply({ error: error.message }, 409);
        server.unregisterModelRepository(repository);
        return mmeErrorReply(error);
      }
      this.#models.set(modelName, repository);
      return emptyReply(200);
    } finally {
      this.#busy.delete(modelName);
    }
  }

  /** `POST /models/<name>/invoke`: inference on the model; errors are 400, or 507 when memory ran out. */
  async #invoke(request: PlatformRequest, name: string, target: string): Promise<Reply> {
    if (!this.#models.has(name)) return emptyReply(404);
    this.#options.logger.verbose(1, 'server', `Invoking SageMaker TargetModel: ${target}`);
    try {
      return withSageMakerContentType(await this.port.infer(request, { modelName: target, modelVersion: undefined }, SAGEMAKER_BINARY_MIME));
    } catch (error) {
      if (request.signal.aborted) throw error;
      return mmeErrorReply(error);
    }
  }

  /** `DELETE /models/<name>`: unloads the model (and what it ran) once its requests are done, then unregisters its repository. */
  async #unload(name: string, target: string): Promise<Reply> {
    const { server, logger } = this.#options;
    const repository = this.#models.get(name);
    if (repository === undefined) return emptyReply(404);
    if (this.#busy.has(name)) return jsonReply({ error: `model '${name}' is being unloaded already` }, 409);
    logger.info('server', `Unloading SageMaker TargetModel: ${target}`);
    const started = Date.now();
    this.#busy.add(name);
    try {
      await server.unloadModel(target, { unloadDependents: true });
    } catch (error) {
      return mmeErrorReply(error);
    } finally {
      this.#busy.delete(name);
    }
    logger.info('server', `UNLOAD for model ${target} completed in ${Math.round((Date.now() - started) / 1000)} seconds.`);
    // As Triton's: the model leaves the list even when its repository cannot be unregistered.
    this.#models.delete(name);
    try {
      server.unregisterModelRepository(repository);
    } catch (error) {
      return mmeErrorReply(error);
    }
    return emptyReply(200);
  }
}
