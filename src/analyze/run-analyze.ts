import { ClientError, HttpClient } from '../client/index.js';
import { type AnalyzeOptions, perfOptionsFor } from './analyze-options.js';
import { sweepConcurrency } from './concurrency-sweep.js';
import { climbRunConfigs, everyRunConfig, nearestCell, searchSpaceOf } from './config-search.js';
import { measureLevel } from './measure-level.js';
import { type Criteria, type MeasuredStep, compareConfigs, latencyUsAt, operatingPointOf } from './objective.js';
import { paretoFront } from './pareto-front.js';
import { type ConfigJson, type RunConfig, applyRunConfig, runConfigLabel, runConfigOf } from './run-config.js';

/** A failure before the search: the server or model cannot be used. */
export class AnalyzeSetupError extends Error {
  override readonly name = 'AnalyzeSetupError';
}

/** One configuration measured. */
export interface ConfigResult {
  readonly label: string;
  readonly runConfig: RunConfig;
  /** The model's own configuration, the baseline. */
  readonly isDefault: boolean;
  readonly steps: readonly MeasuredStep[];
  /** The concurrency of the step the configuration is judged by; undefined when none meets the criteria. */
  readonly operatingConcurrency: number | undefined;
  readonly stopReason: string | undefined;
  /** Why it could not be loaded or measured (its steps then end there, or are empty). */
  readonly failure: string | undefined;
}

/** A point of the Pareto front: one configuration at one concurrency. */
export interface FrontPoint {
  readonly label: string;
  readonly concurrency: number;
  readonly throughputInferPerSec: number;
  readonly latencyUs: number;
}

/** The whole result: what results.json holds. */
export interface AnalyzeResult {
  readonly tool: 'nereid analyze';
  readonly startedAt: string;
  readonly modelName: string;
  readonly url: string;
  readonly searchMode: AnalyzeOptions['searchMode'];
  readonly criteria: Criteria;
  /** False when the model cannot batch: only instance counts were searched. */
  readonly canBatch: boolean;
  /** Why it cannot, in words, when it cannot. */
  readonly batchingNote: string | undefined;
  /** In measurement order, the model's own first. */
  readonly configs: readonly ConfigResult[];
  /** The best configuration meeting the criteria; undefined when none does. */
  readonly bestLabel: string | undefined;
  /** Across every configuration and concurrency, from the lowest latency up (on the chosen percentile). */
  readonly front: readonly FrontPoint[];
  /** The model's configuration as the server served it before the search. */
  readonly servedConfig: ConfigJson;
}

/** What analyze tells as it goes (stderr). */
export type ProgressLine = (line: string) => void;

const ms = (us: number): string => `${(us / 1000).toFixed(2)} ms`;

/** Why a model cannot batch, or undefined when it can. */
function batchingNoteOf(config: ConfigJson): string | undefined {
  if (Number(config.max_batch_size ?? 0) === 0) {
    return `model '${String(config.name)}' cannot batch: its max_batch_size is 0, so its inputs have no batch dimension; only instance counts are searched`;
  }
  if (config.sequence_batching !== undefined) {
    return `model '${String(config.name)}' is a sequence model: its sequence batcher replaces dynamic batching; only instance counts are searched`;
  }
  return undefined;
}

async function readServedConfig(client: HttpClient, modelName: string, url: string): Promise<ConfigJson> {
  try {
    // A plain load first: the model as its files say, whatever an earlier override left loaded.
    await client.loadModel(modelName);
    return (await client.modelConfig(modelName)) as ConfigJson;
  } catch (error) {
    if (error instanceof ClientError) {
      throw new AnalyzeSetupError(`cannot load model '${modelName}' on ${url}: ${error.message} (the server must run with --model-control-mode explicit)`);
    }
    throw error;
  }
}

/**
 * Runs the search on the server at `url` (explicit model control mode): measures the model's own
 * configuration, then the candidates of the search mode, each loaded through the config override;
 * reloads the model from its files at the end. Nothing is written here.
 */
export async function runAnalyze(options: AnalyzeOptions, url: string, progress: ProgressLine): Promise<AnalyzeResult> {
  const startedAt = new Date().toISOString();
  const client = new HttpClient(url);
  const perfBase = perfOptionsFor(options, url);
  const { criteria } = options;
  try {
    const servedConfig = await readServedConfig(client, options.modelName, url);
    if (servedConfig.platform === 'ensemble' || servedConfig.ensemble_scheduling !== undefined) {
      throw new AnalyzeSetupError(`model '${options.modelName}' is an ensemble: it has no instances or batcher of its own; analyze each of its steps' models instead`);
    }
    const batchingNote = batchingNoteOf(servedConfig);
    if (batchingNote !== undefined) progress(`${batchingNote}.`);
    const results: ConfigResult[] = [];
    const measure = async (runConfig: RunConfig, isDefault: boolean): Promise<ConfigResult> => {
      const label = runConfigLabel(runConfig);
      progress(`[${results.length + 1}] ${isDefault ? `the model's own configuration (${label})` : label}`);
      let outcome;
      try {
        if (!isDefault) await client.loadModel(options.modelName, { config: JSON.stringify(applyRunConfig(servedConfig, runConfig)) });
        outcome = await sweepConcurrency(options.maxConcurrency, criteria, async (concurrency) => {
          const level = await measureLevel(perfBase, concurrency);
          if ('step' in level) {
            const { step } = level;
            progress(`    concurrency ${concurrency}: ${step.throughputInferPerSec.toFixed(1)} infer/s, p${criteria.percentile} ${ms(latencyUsAt(step, criteria.percentile))}`);
          }
          return level;
        });
      } catch (error) {
        if (!(error instanceof ClientError)) throw error;
        outcome = { steps: [], stopReason: undefined, failure: `cannot load: ${error.message}` };
      }
      if (outcome.failure !== undefined) progress(`    failed: ${outcome.failure}`);
      const result: ConfigResult = {
        label,
        runConfig,
        isDefault,
        steps: outcome.steps,
        operatingConcurrency: operatingPointOf(outcome.steps, criteria)?.concurrency,
        stopReason: outcome.stopReason,
        failure: outcome.failure,
      };
      results.push(result);
      return result;
    };
    const compare = (a: ConfigResult, b: ConfigResult): number => compareConfigs(a.steps, b.steps, criteria);
    const defaultRunConfig = runConfigOf(servedConfig);
    const baseline = await measure(defaultRunConfig, true);
    // The model as it is cannot be measured (input shapes, data): no candidate could be either.
    if (baseline.steps.length === 0) throw new AnalyzeSetupError(`cannot measure model '${options.modelName}' in its own configuration: ${baseline.failure}`);
    const space = searchSpaceOf(defaultRunConfig.maxBatchSize, batchingNote === undefined, {
      maxInstanceCount: options.maxInstanceCount,
      maxModelBatchSize: options.maxModelBatchSize,
    });
    if (options.searchMode === 'brute') {
      for (const runConfig of everyRunConfig(space)) {
        if (runConfigLabel(runConfig) !== baseline.label) await measure(runConfig, false);
      }
    } else {
      await climbRunConfigs({
        space,
        start: nearestCell(space, defaultRunConfig),
        measure: (runConfig) => measure(runConfig, false),
        compare,
        maxConfigs: Math.max(0, options.maxConfigs - 1),
        known: new Map([[baseline.label, baseline]]),
      });
    }
    const best = results.filter((result) => result.operatingConcurrency !== undefined).reduce<ConfigResult | undefined>((top, result) => (top === undefined || compare(result, top) > 0 ? result : top), undefined);
    const points = results.flatMap((result) => result.steps.map((step) => ({ result, step })));
    const front = paretoFront(points.map(({ step }) => ({ throughput: step.throughputInferPerSec, latencyUs: latencyUsAt(step, criteria.percentile) }))).map((index) => {
      const { result, step } = points[index]!;
      return { label: result.label, concurrency: step.concurrency, throughputInferPerSec: step.throughputInferPerSec, latencyUs: latencyUsAt(step, criteria.percentile) };
    });
    return {
      tool: 'nereid analyze',
      startedAt,
      modelName: options.modelName,
      url,
      searchMode: options.searchMode,
      criteria,
      canBatch: batchingNote === undefined,
      batchingNote,
      configs: results,
      bestLabel: best?.label,
      front,
      servedConfig,
    };
  } finally {
    // Back to the model as its files say; a failure here must not hide the search's own outcome.
    await client.loadModel(options.modelName).catch((error: Error) => progress(`could not reload model '${options.modelName}' from its files: ${error.message}`));
    await client.close();
  }
}
