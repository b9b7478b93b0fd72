import { parseFlags } from '../config/parse-flags.js';
import { type PerfOptions, PerfUsageError, parsePerfArgs } from '../perf/perf-options.js';
import type { SearchMode } from './config-search.js';
import { type Criteria, LATENCY_PERCENTILES, type LatencyPercentile } from './objective.js';

/** `nereid analyze` settings, in Model Analyzer's words where they fit (docs/config.md, docs/config_search.md). */
export interface AnalyzeOptions {
  readonly modelName: string;
  /** The repository to start a server on, and where config.pbtxt is read (and written with `apply`). */
  readonly modelRepository: string | undefined;
  /** A running server in explicit model control mode; undefined: start one on `modelRepository`. */
  readonly url: string | undefined;
  readonly searchMode: SearchMode;
  readonly maxConcurrency: number;
  readonly maxInstanceCount: number;
  readonly maxModelBatchSize: number;
  /** Quick mode: distinct configurations measured at most, the model's own included. */
  readonly maxConfigs: number;
  readonly criteria: Criteria;
  /** The measurement settings, as `nereid perf` flags (the server's URL is added once known). */
  readonly perfArgs: readonly string[];
  readonly reportDir: string | undefined;
  /** Write the winner into the model's config.pbtxt, keeping a backup. */
  readonly isApply: boolean;
}

export class AnalyzeUsageError extends Error {
  override readonly name = 'AnalyzeUsageError';
}

const FLAGS = {
  'model-name': { type: 'string', short: 'm', help: 'NAME      the model to tune (required)' },
  'model-repository': { type: 'string', help: 'DIR       start Nereid on this repository (explicit mode, a free port); with -u: where config.pbtxt is' },
  url: { type: 'string', short: 'u', help: 'URL       use a running server instead (HTTP, --model-control-mode explicit)' },
  'run-config-search-mode': { type: 'string', help: 'brute|quick  every configuration, or a hill climb of a few dozen (default quick)' },
  'run-config-search-max-concurrency': { type: 'string', help: 'N         highest concurrency swept: 1, 2, 4, … (default 256)' },
  'run-config-search-max-instance-count': { type: 'string', help: 'N         most instances tried (default 5)' },
  'run-config-search-max-model-batch-size': { type: 'string', help: 'N         largest max_batch_size tried: 2, 4, … (default 128)' },
  'run-config-search-max-configs': { type: 'string', help: 'N         quick mode: configurations measured at most (default 32)' },
  objective: { type: 'string', help: 'throughput|latency  what the best configuration maximizes or minimizes (default throughput)' },
  'latency-budget-ms': { type: 'string', help: 'MS        constraint: the latency percentile at or under this' },
  'latency-percentile': { type: 'string', help: '50|90|95|99  the percentile of the budget and the latency objective (default 99)' },
  'min-throughput': { type: 'string', help: 'N         constraint: at least N inferences per second' },
  'measurement-interval': { type: 'string', short: 'p', help: 'MS        length of a measurement window (default 1000)' },
  'max-trials': { type: 'string', short: 'r', help: 'N         most windows per concurrency before giving up on stability (default 5)' },
  'stability-percentage': { type: 'string', short: 's', help: 'PCT       the last 3 windows must agree within this (default 10)' },
  shape: { type: 'string', multiple: true, help: 'NAME:D1,D2  the shape of a variable-size input, as for nereid perf (repeatable)' },
  'input-data': { type: 'string', help: 'random|zero|FILE.json  input data, as for nereid perf (default random)' },
  report: { type: 'string', help: 'DIR       write report.html (plots), best-config.pbtxt, results.csv and results.json' },
  apply: { type: 'boolean', help: '          write the best configuration into the model\'s config.pbtxt (the old one kept as config.pbtxt.<time>.bak)' },
  help: { type: 'boolean', short: 'h', help: '          this help' },
} as const;

/** `nereid analyze --help`. */
export function analyzeUsage(): string {
  const lines = Object.entries(FLAGS).map(([name, flag]) => {
    const short = 'short' in flag ? `-${flag.short}, ` : '    ';
    const [argument, ...rest] = flag.help.split('  ');
    return `  ${short}--${name} ${argument!.trim()}`.padEnd(56) + rest.join('  ').trim();
  });
  return `Usage: nereid analyze -m MODEL --model-repository DIR [flags]
       nereid analyze -m MODEL -u URL [flags]

Finds the best configuration of a model for a latency budget, in the spirit of Triton's Model Analyzer:
loads each candidate (instance count × max_batch_size × dynamic batching: off, queue delays, preferred
batch size) through the repository API's config override, measures it with nereid perf's engine over
concurrency 1, 2, 4, … until throughput stops growing or the budget is passed, and reports the best
one meeting the constraints and the Pareto front of throughput against latency. The model's own
configuration is measured first, as the baseline. Progress goes to stderr; the table to stdout.
Nothing in the repository changes without --apply.

Flags:
${lines.join('\n')}
`;
}

function usage(message: string): AnalyzeUsageError {
  return new AnalyzeUsageError(`nereid analyze: ${message}`);
}

function parseNumber(flag: string, text: string | undefined, check: { fallback: number; min: number; isInteger?: boolean }): number {
  if (text === undefined) return check.fallback;
  const value = Number(text);
  if (text.trim() === '' || !Number.isFinite(value) || (check.isInteger === true && !Number.isInteger(value)) || value < check.min) {
    throw usage(`--${flag} takes ${check.isInteger === true ? 'an integer' : 'a number'} from ${check.min} up, got '${text}'`);
  }
  return value;
}

function parseChoice<T extends string>(flag: string, text: string | undefined, choices: readonly T[], fallback: T): T {
  if (text === undefined) return fallback;
  if (!(choices as readonly string[]).includes(text)) throw usage(`--${flag} takes ${choices.join(', ')}, got '${text}'`);
  return text as T;
}

/** The `nereid perf` options for the model on the server at `url`, from the measurement flags. */
export function perfOptionsFor(options: AnalyzeOptions, url: string): PerfOptions {
  try {
    const parsed = parsePerfArgs([...options.perfArgs, '-u', url]);
    if (parsed === 'help') throw usage('unexpected --help among the measurement flags');
    return parsed;
  } catch (error) {
    if (error instanceof PerfUsageError) throw usage(error.message.replace(/^nereid perf: /, ''));
    throw error;
  }
}

/** Reads `nereid analyze` flags; every default and cross-flag check is here. */
export function parseAnalyzeArgs(args: readonly string[]): AnalyzeOptions | 'help' {
  const values = parseFlags(args, FLAGS, 'analyze', usage);
  if (values.help === true) return 'help';
  const string = (name: keyof typeof FLAGS): string | undefined => values[name] as string | undefined;
  const modelName = string('model-name');
  if (modelName === undefined || modelName === '') throw usage('-m MODEL is required (the model to tune)');
  const modelRepository = string('model-repository');
  const url = string('url');
  if (modelRepository === undefined && url === undefined) throw usage('give --model-repository DIR (Nereid is started on it) or -u URL (a running server)');
  const isApply = values.apply === true;
  if (isApply && modelRepository === undefined) throw usage('--apply writes into the model\'s folder: give --model-repository DIR');
  const percentileText = string('latency-percentile') ?? '99';
  const percentile = Number(percentileText) as LatencyPercentile;
  if (!LATENCY_PERCENTILES.includes(percentile)) throw usage(`--latency-percentile takes ${LATENCY_PERCENTILES.join(', ')}, got '${percentileText}'`);
  const budgetText = string('latency-budget-ms');
  const minThroughputText = string('min-throughput');
  const perfArgs = [
    '-m', modelName,
    '-p', String(parseNumber('measurement-interval', string('measurement-interval'), { fallback: 1000, min: 1, isInteger: true })),
    '-r', String(parseNumber('max-trials', string('max-trials'), { fallback: 5, min: 1, isInteger: true })),
    '-s', String(parseNumber('stability-percentage', string('stability-percentage'), { fallback: 10, min: 0 })),
    '--percentile', String(percentile),
    ...((values.shape as string[] | undefined) ?? []).flatMap((shape) => ['--shape', shape]),
    ...(string('input-data') !== undefined ? ['--input-data', string('input-data')!] : []),
  ];
  const options: AnalyzeOptions = {
    modelName,
    modelRepository,
    url,
    searchMode: parseChoice('run-config-search-mode', string('run-config-search-mode'), ['brute', 'quick'] as const, 'quick'),
    maxConcurrency: parseNumber('run-config-search-max-concurrency', string('run-config-search-max-concurrency'), { fallback: 256, min: 1, isInteger: true }),
    maxInstanceCount: parseNumber('run-config-search-max-instance-count', string('run-config-search-max-instance-count'), { fallback: 5, min: 1, isInteger: true }),
    maxModelBatchSize: parseNumber('run-config-search-max-model-batch-size', string('run-config-search-max-model-batch-size'), { fallback: 128, min: 1, isInteger: true }),
    maxConfigs: parseNumber('run-config-search-max-configs', string('run-config-search-max-configs'), { fallback: 32, min: 1, isInteger: true }),
    criteria: {
      objective: parseChoice('objective', string('objective'), ['throughput', 'latency'] as const, 'throughput'),
      percentile,
      latencyBudgetMs: budgetText === undefined ? undefined : parseNumber('latency-budget-ms', budgetText, { fallback: 0, min: 0 }),
      minThroughput: minThroughputText === undefined ? undefined : parseNumber('min-throughput', minThroughputText, { fallback: 0, min: 0 }),
    },
    perfArgs,
    reportDir: string('report'),
    isApply,
  };
  perfOptionsFor(options, url ?? 'localhost:8000');
  return options;
}
