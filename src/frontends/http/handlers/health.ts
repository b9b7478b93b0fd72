import type { InferenceServer } from '../../../core/index.js';
import { type Reply, emptyReply, jsonReply } from '../reply.js';

/** `GET /v2/health/live|ready`: 200 when true, 400 when not, empty body (Triton's behaviour). */
export function handleHealth(server: InferenceServer, check: 'live' | 'ready'): Reply {
  const isOk = check === 'live' ? server.isLive() : server.isReady();
  return emptyReply(isOk ? 200 : 400);
}

/** `GET /v2`: name, version and the extensions this server implements. */
export function handleServerMetadata(server: InferenceServer): Reply {
  return jsonReply(server.serverMetadata());
}
