import type { InferenceSession } from 'onnxruntime-node';
import type { ModelConfig } from '../../protocol/gen/model_config_pb.js';
import { NereidError } from '../../kernel/errors.js';

/**
 * ONNX Runtime session settings from a model configuration, under the names Triton's onnxruntime
 * backend reads: `parameters` intra_op_thread_count, inter_op_thread_count, execution_mode (0
 * sequential, 1 parallel), enable_mem_arena, enable_mem_pattern; `optimization { graph { level } }`
 * with -1 basic, 1 extended, 2 disabled and 0 (the default) all optimisations.
 *
 * Defaults differ from Triton's on purpose: Triton lets each session take every core (0 = ORT's
 * choice), which oversubscribes the CPU as soon as a model has several instances. Here each instance
 * gets an equal share of the cores, at least one thread, unless the config asks for a count.
 *
 * The threads of a session's pools do not spin between parallel sections (ONNX Runtime's
 * `session.intra_op.allow_spinning` and `session.inter_op.allow_spinning` 0, its default 1) unless the
 * config sets `parameters` allow_spinning to 1 (Nereid's own). Spinning kept a second core busy for as
 * long again as a microsecond-long MLP computed (docs/benchmarks.md, issue 20), the core that the main
 * thread and the other execution threads need. For ResNet-18 on the loaded 2-core machine spinning
 * lowered the throughput behind the batcher and raised the CPU per inference, in the engine and in
 * the server alike (docs/benchmarks.md, "ResNet-18 behind the batcher: where the 0.77 and 0.81
 * go"); whether it pays for a big model on idle cores is what bench/shared-memory.ts's spinning row
 * measures.
 */
const spinningEntries = (isSpinning: boolean): Record<string, string> => {
  const value = isSpinning ? '1' : '0';
  return { 'session.intra_op.allow_spinning': value, 'session.inter_op.allow_spinning': value };
};

export function sessionOptionsFromConfig(
  config: ModelConfig,
  options: { readonly instanceCount: number; readonly cpuCount: number },
): InferenceSession.SessionOptions {
  const parameter = (key: string): string | undefined => config.parameters[key]?.stringValue;
  const integer = (key: string, min: number, max: number): number | undefined => {
    const text = parameter(key);
    if (text === undefined) return undefined;
    const value = Number(text);
    if (!Number.isInteger(value) || value < min || value > max) {
      throw new NereidError(
        'INVALID_ARG',
        `model '${config.name}': parameters '${key}' must be an integer from ${min} to ${max}, got "${text}"`,
      );
    }
    return value;
  };
  const flag = (key: string): boolean | undefined => {
    const text = parameter(key);
    if (text === undefined) return undefined;
    if (text === '1' || text === 'true') return true;
    if (text === '0' || text === 'false') return false;
    throw new NereidError('INVALID_ARG', `model '${config.name}': parameters '${key}' must be 0, 1, true or false, got "${text}"`);
  };

  const fairShare = Math.max(1, Math.floor(options.cpuCount / Math.max(1, options.instanceCount)));
  const intraOp = integer('intra_op_thread_count', 0, 1024);
  const interOp = integer('inter_op_thread_count', 0, 1024);
  const executionMode = integer('execution_mode', 0, 1);
  const isSpinning = flag('allow_spinning') ?? false;
  const sessionOptions: InferenceSession.SessionOptions = {
    executionProviders: ['cpu'],
    intraOpNumThreads: intraOp === undefined || intraOp === 0 ? fairShare : intraOp,
    interOpNumThreads: interOp === undefined || interOp === 0 ? 1 : interOp,
    executionMode: executionMode === 1 ? 'parallel' : 'sequential',
    graphOptimizationLevel: graphLevel(config),
    logSeverityLevel: 3,
    extra: spinningEntries(isSpinning),
  };
  const memArena = flag('enable_mem_arena');
  if (memArena !== undefined) sessionOptions.enableCpuMemArena = memArena;
  const memPattern = flag('enable_mem_pattern');
  if (memPattern !== undefined) sessionOptions.enableMemPattern = memPattern;
  return sessionOptions;
}

function graphLevel(config: ModelConfig): InferenceSession.SessionOptions['graphOptimizationLevel'] {
  const level = config.optimization?.graph?.level ?? 0;
  switch (level) {
    case -1:
      return 'basic';
    case 1:
      return 'extended';
    case 2:
      return 'disabled';
    case 0:
      return 'all';
    default:
      throw new NereidError(
        'INVALID_ARG',
        `model '${config.name}': optimization.graph.level must be -1 (basic), 0 (all), 1 (extended) or 2 (disabled), got ${level}`,
      );
  }
}
