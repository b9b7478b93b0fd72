/**
 * One candidate configuration of a model: the settings `nereid analyze` searches (Model Analyzer's
 * "run config" without the concurrency, which each measurement sweeps).
 */
export interface RunConfig {
  readonly instanceCount: number;
  /** 0: the model cannot batch (no batch dimension). */
  readonly maxBatchSize: number;
  /** undefined: no dynamic batching. */
  readonly dynamicBatching: DynamicBatching | undefined;
}

export interface DynamicBatching {
  readonly maxQueueDelayUs: number;
  /** Empty: Triton's default, which is `[max_batch_size]`. */
  readonly preferredBatchSizes: readonly number[];
}

/** A model configuration as JSON with proto field names (Triton's `GET .../config`, or proto3 JSON). */
export type ConfigJson = Readonly<Record<string, unknown>>;

/** A short label for tables and plots: `i2 b16 d500`, `i2 b16 d500 p8/16`, `i1 b32 off`, `i3` (cannot batch). */
export function runConfigLabel(config: RunConfig): string {
  const instances = `i${config.instanceCount}`;
  if (config.maxBatchSize === 0) return instances;
  const batching = config.dynamicBatching;
  if (batching === undefined) return `${instances} b${config.maxBatchSize} off`;
  const preferred = batching.preferredBatchSizes.length > 0 ? ` p${batching.preferredBatchSizes.join('/')}` : '';
  return `${instances} b${config.maxBatchSize} d${batching.maxQueueDelayUs}${preferred}`;
}

/** In words, for the summary: "2 instances with batching up to 16 and a 500 µs delay". */
export function describeRunConfig(config: RunConfig): string {
  const instances = `${config.instanceCount} instance${config.instanceCount === 1 ? '' : 's'}`;
  if (config.maxBatchSize === 0) return `${instances} (the model cannot batch)`;
  const batching = config.dynamicBatching;
  if (batching === undefined) return `${instances} without dynamic batching`;
  const preferred =
    batching.preferredBatchSizes.length > 0
      ? `, preferred batch size${batching.preferredBatchSizes.length === 1 ? '' : 's'} ${batching.preferredBatchSizes.join(', ')}`
      : '';
  const delay = batching.maxQueueDelayUs > 0 ? ` and a ${batching.maxQueueDelayUs} µs delay` : ' and no delay';
  return `${instances} with batching up to ${config.maxBatchSize}${preferred}${delay}`;
}

const numberOf = (value: unknown, fallback: number): number => (value === undefined || value === null || value === '' ? fallback : Number(value));

function groupsOf(config: ConfigJson): Array<Record<string, unknown>> {
  return Array.isArray(config.instance_group) ? (config.instance_group as Array<Record<string, unknown>>) : [];
}

/**
 * The run config a model configuration describes; instances are counted over all its instance groups.
 * Preferred batch sizes of just `[max_batch_size]` read as none: Triton's normalization fills them in
 * so (core src/model_config_utils.cc, NormalizeModelConfig), so the two are the same configuration.
 */
export function runConfigOf(config: ConfigJson): RunConfig {
  const groups = groupsOf(config);
  const instanceCount = groups.length === 0 ? 1 : groups.reduce((total, group) => total + numberOf(group.count, 1), 0);
  const maxBatchSize = numberOf(config.max_batch_size, 0);
  const batching = config.dynamic_batching as Record<string, unknown> | undefined;
  if (batching === undefined || batching === null) return { instanceCount, maxBatchSize, dynamicBatching: undefined };
  const preferred = Array.isArray(batching.preferred_batch_size) ? batching.preferred_batch_size.map((size) => Number(size)) : [];
  return {
    instanceCount,
    maxBatchSize,
    dynamicBatching: {
      maxQueueDelayUs: numberOf(batching.max_queue_delay_microseconds, 0),
      preferredBatchSizes: preferred.length === 1 && preferred[0] === maxBatchSize ? [] : preferred,
    },
  };
}

/**
 * The model configuration with the run config's settings, everything else kept. NOTE: the instances
 * become one group, the first group's settings (kind, name, …) with the new count: a model with several
 * groups (rare on CPU) is measured as one. Dynamic batching keeps its other fields (preserve_ordering,
 * priorities, …).
 */
export function applyRunConfig(config: ConfigJson, runConfig: RunConfig): ConfigJson {
  const [firstGroup = {}] = groupsOf(config);
  const applied: Record<string, unknown> = {
    ...config,
    max_batch_size: runConfig.maxBatchSize,
    instance_group: [{ ...firstGroup, count: runConfig.instanceCount }],
  };
  const batching = runConfig.dynamicBatching;
  if (batching === undefined) {
    delete applied.dynamic_batching;
  } else {
    const kept = { ...((config.dynamic_batching as Record<string, unknown> | undefined) ?? {}) };
    delete kept.preferred_batch_size;
    applied.dynamic_batching = {
      ...kept,
      max_queue_delay_microseconds: batching.maxQueueDelayUs,
      ...(batching.preferredBatchSizes.length > 0 ? { preferred_batch_size: [...batching.preferredBatchSizes] } : {}),
    };
  }
  return applied;
}
