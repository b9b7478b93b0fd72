import { type InferenceServer, NereidError } from '../../../core/index.js';
import { parseRequestJson } from '../request-json.js';
import { type Reply, jsonReply } from '../reply.js';

/** `GET /v2/logging` reads the log settings; `POST` changes those it names and returns them all. */
export function handleLogging(server: InferenceServer, body: Buffer | undefined): Reply {
  if (body === undefined || body.byteLength === 0) return jsonReply(server.logSettings());
  const json = parseRequestJson(body.toString('utf8'), 'log settings');
  if (typeof json !== 'object' || json === null || Array.isArray(json)) {
    throw new NereidError('INVALID_ARG', 'the log settings must be a JSON object, e.g. {"log_verbose_level": 1}');
  }
  return jsonReply(server.logSettings(json));
}
