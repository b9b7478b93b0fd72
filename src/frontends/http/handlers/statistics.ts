import type { InferenceServer } from '../../../core/index.js';
import { statisticsMessage } from '../../statistics-message.js';
import { type Reply, jsonReply } from '../reply.js';

/** `GET /v2/models[/{m}[/versions/{v}]]/stats`: every model, every version of one, or one version. */
export function handleStatistics(
  server: InferenceServer,
  target: { readonly modelName: string | undefined; readonly modelVersion: number | undefined },
): Reply {
  return jsonReply({ model_stats: server.modelStatistics(target.modelName, target.modelVersion).map(statisticsMessage) });
}
