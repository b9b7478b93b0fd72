import { type InferenceServer, NereidError, parseTraceSettingsUpdate } from '../../../core/index.js';
import { describeJson } from '../../../protocol/json-body.js';
import { parseRequestJson } from '../request-json.js';
import { type Reply, jsonReply } from '../reply.js';

/**
 * The body of `POST .../trace/setting` as the settings parser takes it: each setting's values, or null.
 * Triton takes `trace_level` as an array of names and the others as strings; numbers are taken too.
 */
function settingValues(body: Buffer): Record<string, string[] | null> {
  const json = parseRequestJson(body.toString('utf8'), 'trace settings');
  if (typeof json !== 'object' || json === null || Array.isArray(json)) {
    throw new NereidError('INVALID_ARG', 'the trace settings must be a JSON object, e.g. {"trace_rate": "100"}');
  }
  const wire: Record<string, string[] | null> = {};
  for (const [key, value] of Object.entries(json)) {
    if (value === null) wire[key] = null;
    else if (key === 'trace_level' && Array.isArray(value) && value.every((name) => typeof name === 'string')) wire[key] = value as string[];
    else if (key !== 'trace_level' && (typeof value === 'string' || typeof value === 'number' || typeof value === 'bigint')) wire[key] = [String(value)];
    else throw new NereidError('INVALID_ARG', `Unable to parse '${key}', got: ${describeJson(value)}`);
  }
  return wire;
}

/** `GET /v2[/models/{m}]/trace/setting` reads the trace settings; `POST` changes those it names and returns them all. */
export function handleTraceSetting(server: InferenceServer, modelName: string | undefined, body: Buffer | undefined): Reply {
  const update = body === undefined ? undefined : parseTraceSettingsUpdate(settingValues(body));
  return jsonReply(server.traceSettings(modelName, update));
}
