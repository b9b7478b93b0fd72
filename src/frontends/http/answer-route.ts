import { type InferenceServer, NereidError } from '../../core/index.js';
import type { SharedMemoryRegistry } from '../shared-memory/shared-memory-registry.js';
import { handleHealth, handleServerMetadata } from './handlers/health.js';
import { handleLogging } from './handlers/logging.js';
import { handleModelConfig, handleModelMetadata, handleModelReady } from './handlers/models.js';
import { handleRepositoryIndex, handleRepositoryModel } from './handlers/repository.js';
import { handleCudaSharedMemory, handleSystemSharedMemory } from './handlers/shared-memory.js';
import { handleStatistics } from './handlers/statistics.js';
import { handleTraceSetting } from './handlers/trace.js';
import type { Reply } from './reply.js';
import type { Route } from './routes.js';

export interface RouteContext {
  readonly server: InferenceServer;
  /** The system shared memory regions; without them, registering fails. */
  readonly sharedMemory: SharedMemoryRegistry | undefined;
  /** The request's method: GET reads the logging and trace settings, POST changes them. */
  readonly method: string;
  /** Reads the request's whole body (only the routes that take one call it). */
  readonly readBody: () => Promise<Buffer>;
}

/**
 * The answer to a routed request of the KServe v2 HTTP API that runs no model: health, metadata,
 * statistics, the repository, shared memory, logging and trace settings. Shared by the HTTP front end
 * and the Vertex AI front end's redirects, which answer a model's infer, generate and generate_stream
 * themselves: those routes here are a bug.
 */
export async function answerRoute(route: Route, { server, sharedMemory, method, readBody }: RouteContext): Promise<Reply> {
  switch (route.kind) {
    case 'server-metadata':
      return handleServerMetadata(server);
    case 'health':
      return handleHealth(server, route.check);
    case 'statistics':
      return handleStatistics(server, route);
    case 'repository-index':
      return handleRepositoryIndex(server, await readBody());
    case 'repository-model':
      return handleRepositoryModel(server, route, await readBody());
    case 'logging':
      return handleLogging(server, method === 'POST' ? await readBody() : undefined);
    case 'shared-memory': {
      const body = route.action === 'register' ? await readBody() : Buffer.alloc(0);
      if (route.memory === 'cuda') return handleCudaSharedMemory(route, body);
      if (sharedMemory === undefined) throw new NereidError('UNSUPPORTED', 'this server has no system shared memory');
      return handleSystemSharedMemory(sharedMemory, route, body);
    }
    case 'trace-setting':
      return handleTraceSetting(server, route.modelName, method === 'POST' ? await readBody() : undefined);
    case 'model':
      switch (route.action) {
        case 'metadata':
          return handleModelMetadata(server, route);
        case 'ready':
          return handleModelReady(server, route);
        case 'config':
          return handleModelConfig(server, route);
        case 'stats':
          return handleStatistics(server, route);
        case 'infer':
        case 'generate':
        case 'generate_stream':
          throw new Error(`answerRoute was given the inference route '${route.action}' of '${route.modelName}'`);
      }
  }
}
