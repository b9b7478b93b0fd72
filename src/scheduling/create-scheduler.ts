import { type ModelConfig, type ModelQueuePolicy, ModelQueuePolicy_TimeoutAction } from '../protocol/gen/model_config_pb.js';
import type { ModelStatistics } from '../metrics/model-statistics.js';
import { DirectScheduler } from './direct-scheduler.js';
import { DynamicBatcher } from './dynamic-batcher.js';
import type { InstancePool } from './instance-pool.js';
import type { QueuePolicy } from './priority-queue.js';
import type { Scheduler } from './scheduler.js';
import type { Logger } from '../logging/logger.js';
import { environmentSchedulerDelay } from './scheduler-delay.js';
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

/** What the schedulers need beyond the config: the sequence batcher's implicit states read at load (sequence-states.ts), and the log. */
export interface SchedulingOptions {
  readonly stateSpecs: readonly StateSpec[];
  readonly logger?: Logger;
}

/**
 * TRITONSERVER_DELAY_SCHEDULER, logged as Triton logs it: once for a dynamic batcher (`modelName`), once
 * per instance for a sequence batcher (Triton's thread per instance, numbered from 0).
 */
function delayUntilQueued(logger: Logger | undefined, batcher: { readonly modelName: string } | { readonly instanceCount: number }): number {
  const count = environmentSchedulerDelay();
  if (count === 0 || logger === undefined) return count;
  if ('modelName' in batcher) logger.verbose(1, 'scheduler', `Delaying batcher thread for ${batcher.modelName} until ${count} queued requests...`);
  else for (let index = 0; index < batcher.instanceCount; index++) logger.verbose(1, 'scheduler', `Delaying scheduler thread ${index} until ${count} queued requests...`);
  return count;
}

/**
 * The scheduler a normalised config asks for: the dynamic batcher, the sequence batcher, or Triton's
 * default scheduler. Ensembles bring their own scheduler (BackendModel.createScheduler).
 */
export function createScheduler(config: ModelConfig, pool: InstancePool, statistics: ModelStatistics, options?: SchedulingOptions): Scheduler {
  const choice = config.schedulingChoice;
  if (choice.case === 'sequenceBatching') {
    const batching = choice.value;
    const isBatching = config.maxBatchSize > 0;
    const strategy = batching.strategyChoice;
    return new SequenceBatcher({
      modelName: config.name,
      pool,
      statistics,
      logger: options?.logger,
      delayUntilQueued: delayUntilQueued(options?.logger, { instanceCount: pool.instances.length }),
      maxBatchSize: config.maxBatchSize,
      maxSequenceIdleUs: Number(batching.maxSequenceIdleMicroseconds),
      controls: new SequenceControls(batching, isBatching),
      states: new SequenceStates(options?.stateSpecs ?? [], isBatching),
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
    delayUntilQueued: delayUntilQueued(options?.logger, { modelName: config.name }),
    priorityLevels: Number(batching.priorityLevels),
    defaultPriorityLevel: Number(batching.defaultPriorityLevel),
    defaultQueuePolicy: queuePolicyOf(batching.defaultQueuePolicy),
    priorityQueuePolicies: new Map(Object.entries(batching.priorityQueuePolicy).map(([level, policy]) => [Number(level), queuePolicyOf(policy)])),
  });
}
