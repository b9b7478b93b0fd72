import { NereidError } from '../../kernel/errors.js';
import type { ModelConfig } from '../../protocol/gen/model_config_pb.js';
import { NEVER_INLINE } from './inline-guard.js';
import type { OrtInstanceOptions } from './ort-instance.js';

/** What an instance is told of running inline, from its model's configuration. */
export type InlineOptions = Pick<OrtInstanceOptions, 'inlinePolicy' | 'isFedByBatcher'>;

/**
 * Config parameter `inline_batches` ("true" or "false", the default): whether an instance behind a
 * dynamic batcher may run its small batches on the main thread when the inline guard lets it, as an
 * instance without one does. Off by default: inline, the MLP of bench/hot-path.ts with queue delay 0
 * served 0.69 and 0.85 of the threaded build at 8 and 32 clients (a batch of two ran in about 35 µs
 * inline against 12 in a loop: its 340 KB of weights do not stay in the main thread's caches, it
 * seems), while the digits pipeline, whose classifier holds 10 KB, took 0.85 of the CPU per pipeline
 * with it (docs/benchmarks.md, "The classifier inline").
 */
export function inlineOptionsOf(config: ModelConfig): InlineOptions {
  const text = config.parameters.inline_batches?.stringValue;
  if (text !== undefined && text !== 'true' && text !== 'false') {
    throw new NereidError('INVALID_ARG', `model '${config.name}': parameter inline_batches is '${text}'; expected 'true' or 'false'`);
  }
  if (config.schedulingChoice.case !== 'dynamicBatching') return {};
  return text === 'true' ? { isFedByBatcher: true } : { inlinePolicy: NEVER_INLINE };
}
