import { type ModelConfig, type ModelQueuePolicy, ModelQueuePolicy_TimeoutAction } from '../protocol/gen/model_config_pb.js';
import type { ModelStatistics } from '../metrics/model-statistics.js';
import { DirectScheduler } from './direct-scheduler.js';
import { DynamicBatcher } from './dynamic-batcher.js';
import type { InstancePool } from './instance-pool.js';
import type { QueuePolicy } from './priority-queue.js';
import type { Scheduler } from './scheduler.js';

function queuePolicyOf(policy: ModelQueuePolicy | undefined): QueuePolicy {
  return {
    timeoutAction: policy?.timeoutAction === ModelQueuePolicy_TimeoutAction.DELAY ? 'DELAY' : 'REJECT',
    defaultTimeoutUs: Number(policy?.defaultTimeoutMicroseconds ?? 0n),
    allowTimeoutOverride: policy?.allowTimeoutOverride ?? false,
    maxQueueSize: policy?.maxQueueSize ?? 0,
  };
}

/**
 * The scheduler a normalised config asks for: the dynamic batcher, or Triton's default scheduler.
 * NOTE: a config with sequence_batching never gets here: config/supported-fields.ts refuses it at load
 * until a sequence batcher exists, since the default scheduler would mix the requests of different
 * sequences. Ensembles bring their own scheduler (BackendModel.createScheduler).
 */
export function createScheduler(config: ModelConfig, pool: InstancePool, statistics: ModelStatistics): Scheduler {
  const choice = config.schedulingChoice;
  if (choice.case !== 'dynamicBatching') {
    return new DirectScheduler({ modelName: config.name, pool, statistics, isBatching: config.maxBatchSize > 0 });
  }
  const batching = choice.value;
  return new DynamicBatcher({
    modelName: config.name,
    pool,
    statistics,
    maxBatchSize: config.maxBatchSize,
    preferredBatchSizes: batching.preferredBatchSize.length > 0 ? batching.preferredBatchSize : [Math.max(1, config.maxBatchSize)],
    maxQueueDelayUs: Number(batching.maxQueueDelayMicroseconds),
    preserveOrdering: batching.preserveOrdering,
    priorityLevels: Number(batching.priorityLevels),
    defaultPriorityLevel: Number(batching.defaultPriorityLevel),
    defaultQueuePolicy: queuePolicyOf(batching.defaultQueuePolicy),
    priorityQueuePolicies: new Map(Object.entries(batching.priorityQueuePolicy).map(([level, policy]) => [Number(level), queuePolicyOf(policy)])),
  });
}
