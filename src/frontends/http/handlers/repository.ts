import { type InferenceServer, NereidError } from '../../../core/index.js';
import type { RepositoryIndexEntry, RepositoryIndexEntryJson } from '../../../protocol/repository-index.js';
import { type JsonValue, describeJson } from '../../../protocol/json-body.js';
import { parseRequestJson } from '../request-json.js';
import { type Reply, emptyReply, jsonReply } from '../reply.js';
import { NON_BOOLEAN } from '../../triton-json.js';

/** An index entry as Triton writes it: version and reason only when there is one. */
export function indexEntryMessage(entry: RepositoryIndexEntry): RepositoryIndexEntryJson {
  return {
    name: entry.name,
    ...(entry.version !== '' ? { version: entry.version } : {}),
    state: entry.state,
    ...(entry.reason !== '' ? { reason: entry.reason } : {}),
  };
}

/** `POST /v2/repository/index` with an optional `{"ready": true}`: the models and their states. */
export function handleRepositoryIndex(server: InferenceServer, body: Buffer): Reply {
  let isReadyOnly = false;
  if (body.byteLength > 0) {
    const json = parseRequestJson(body.toString('utf8'), 'repository index request');
    const ready = typeof json === 'object' && json !== null && !Array.isArray(json) ? json.ready : undefined;
    if (ready !== undefined && typeof ready !== 'boolean') {
      throw new NereidError('INVALID_ARG', `'ready' must be true or false, got ${describeJson(ready)}`);
    }
    isReadyOnly = ready === true;
  }
  return jsonReply(server.repositoryIndex(isReadyOnly).map(indexEntryMessage));
}

/**
 * An unload request's `parameters.unload_dependents`: false when absent. NOTE: Triton builds this
 * error for a value that is not a boolean (http_server.cc `HandleRepositoryControl`, TritonJson's
 * AsBool, as INTERNAL), and for a body that is not JSON, then overwrites it with the unload's own
 * outcome: the model is unloaded without its dependents. Nereid refuses the request instead (400,
 * unloading nothing), as it does any malformed input.
 */
function unloadDependentsOf(json: JsonValue | undefined): boolean {
  const parameters = typeof json === 'object' && json !== null && !Array.isArray(json) ? json.parameters : undefined;
  const value = typeof parameters === 'object' && parameters !== null && !Array.isArray(parameters) ? parameters.unload_dependents : undefined;
  if (value === undefined) return false;
  if (typeof value !== 'boolean') throw new NereidError('INVALID_ARG', `Unable to parse 'unload_dependents': ${NON_BOOLEAN}`);
  return value;
}

/** `POST /v2/repository/models/{m}/load|unload`: answers 200 with an empty body once the model is loaded (or reloaded) or unloaded. */
export async function handleRepositoryModel(
  server: InferenceServer,
  route: { readonly action: 'load' | 'unload'; readonly modelName: string },
  body: Buffer,
): Promise<Reply> {
  const json = body.byteLength > 0 ? parseRequestJson(body.toString('utf8'), `${route.action} request`) : undefined;
  if (route.action === 'unload') {
    await server.unloadModel(route.modelName, { unloadDependents: unloadDependentsOf(json) });
    return emptyReply(200);
  }
  const raw = typeof json === 'object' && json !== null && !Array.isArray(json) ? json.parameters : undefined;
  const parameters: Record<string, string | Uint8Array | boolean | number | bigint> = {};
  if (typeof raw === 'object' && raw !== null && !Array.isArray(raw)) {
    for (const [key, value] of Object.entries(raw)) {
      if (key.startsWith('file:')) {
        if (typeof value !== 'string') throw new NereidError('INVALID_ARG', `load parameter '${key}' must be the file's bytes in base64`);
        parameters[key] = Buffer.from(value, 'base64');
      } else if (typeof value === 'string' || typeof value === 'boolean' || typeof value === 'number' || typeof value === 'bigint') {
        parameters[key] = value;
      }
    }
  }
  await server.loadModel(route.modelName, parameters);
  return emptyReply(200);
}
