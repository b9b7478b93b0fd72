import { type ModelConfig, type ModelQueuePolicy, ModelQueuePolicy_TimeoutAction } from '../protocol/gen/model_config_pb.js';
import type { ModelStatistics } from '../metrics/model-statistics.js';
import { DirectScheduler } from './direct-scheduler.js';
import { DynamicBatcher } from './dynamic-batcher.js';
import type { InstancePool } from './instance-pool.js';
import type { QueuePolicy } from './priority-queue.js';
import type { Scheduler } from './scheduler.js';
import type { Logger } from '../logging/logger.js';
import { SequenceBatcher } from './sequence-batcher.js';
import { SequenceControls } from './sequence-controls.js';
import { type StateSpec, SequenceStates } from './sequence-states.js';

function queuePolicyOf(policy: ModelQueuePolicy | undefined): QueuePolicy {
  return {
    timeoutAction: policy?.timeoutAction === ModelQueuePolicy_TimeoutAction.DELAY ? 'DELAY' : 'REJECT',
    defaultTimeoutUs: Number(policy?.defaultTimeoutMicroseconds ?? 0n),
    allowTimeoutOverride: policy?.allowTimeoutOverride ?? false,
    maxQueueSize: policy?.maxQueueSize ?? 0,
  };
}

/** What the sequence batcher needs beyond the config: the implicit states read at load (sequence-states.ts). */
export interface SequenceSchedulingOptions {
  readonly stateSpecs: readonly StateSpec[];
  readonly logger?: Logger;
}

/**
 * The scheduler a normalised config asks for: the dynamic batcher, the sequence batcher, or Triton's
 * default scheduler. Ensembles bring their own scheduler (BackendModel.createScheduler).
 */
export function createScheduler(config: ModelConfig, pool: InstancePool, statistics: ModelStatistics, sequence?: SequenceSchedulingOptions): Scheduler {
  const choice = config.schedulingChoice;
  if (choice.case === 'sequenceBatching') {
    const batching = choice.value;
    const isBatching = config.maxBatchSize > 0;
    const strategy = batching.strategyChoice;
    return new SequenceBatcher({
      modelName: config.name,
      pool,
      statistics,
      logger: sequence?.logger,
      maxBatchSize: config.maxBatchSize,
      maxSequenceIdleUs: Number(batching.maxSequenceIdleMicroseconds),
      controls: new SequenceControls(batching, isBatching),
      states: new SequenceStates(sequence?.stateSpecs ?? [], isBatching),
      isIterative: batching.iterativeSequence,
      strategy:
        strategy.case === 'oldest'
          ? {
              kind: 'oldest',
              maxCandidateSequences: strategy.value.maxCandidateSequences,
              preferredBatchSizes: strategy.value.preferredBatchSize.length > 0 ? strategy.value.preferredBatchSize : [Math.max(1, config.maxBatchSize)],
              maxQueueDelayUs: Number(strategy.value.maxQueueDelayMicroseconds),
              preserveOrdering: strategy.value.preserveOrdering,
            }
          : {
              kind: 'direct',
              maxQueueDelayUs: Number(strategy.value?.maxQueueDelayMicroseconds ?? 0n),
              minimumSlotUtilization: strategy.value?.minimumSlotUtilization ?? 0,
            },
    });
  }
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
