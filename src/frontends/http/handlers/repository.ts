import { type IndexEntry, type InferenceServer, NereidError } from '../../../core/index.js';
import { parseJsonBody } from '../json-body.js';
import { type Reply, jsonReply } from '../reply.js';

/** An index entry as Triton writes it: version and reason only when there is one. */
export function indexEntryMessage(entry: IndexEntry): object {
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
    const json = parseJsonBody(body.toString('utf8'), 'repository index request');
    const ready = typeof json === 'object' && json !== null && !Array.isArray(json) ? json.ready : undefined;
    if (ready !== undefined && typeof ready !== 'boolean') {
      throw new NereidError('INVALID_ARG', `'ready' must be true or false, got ${JSON.stringify(ready)}`);
    }
    isReadyOnly = ready === true;
  }
  return jsonReply(server.repositoryIndex(isReadyOnly).map(indexEntryMessage));
}
