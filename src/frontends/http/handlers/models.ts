import { type InferenceServer, modelConfigToTritonJson } from '../../../core/index.js';
import { type Reply, emptyReply, jsonReply } from '../reply.js';

interface ModelTarget {
  readonly modelName: string;
  readonly modelVersion: number | undefined;
}

/** `GET /v2/models/{m}[/versions/{v}]`: name, ready versions, platform, inputs and outputs. */
export async function handleModelMetadata(server: InferenceServer, target: ModelTarget): Promise<Reply> {
  return jsonReply(await server.modelMetadata(target.modelName, target.modelVersion));
}

/**
 * `GET /v2/models/{m}[/versions/{v}]/ready`: 200 with an empty body when the version can take
 * requests, else 400 with Triton's error (http_server.cc `HandleModelReady`).
 */
export function handleModelReady(server: InferenceServer, target: ModelTarget): Reply {
  return server.isModelReady(target.modelName, target.modelVersion) ? emptyReply(200) : jsonReply({ error: 'Model version not ready' }, 400);
}

/** `GET /v2/models/{m}[/versions/{v}]/config`: the configuration with Triton's defaults filled in. */
export async function handleModelConfig(server: InferenceServer, target: ModelTarget): Promise<Reply> {
  const json = modelConfigToTritonJson(await server.modelConfig(target.modelName, target.modelVersion));
  return { status: 200, headers: { 'content-type': 'application/json' }, chunks: [Buffer.from(json)] };
}
