import { parseFlags } from '../config/parse-flags.js';
import type { Compression } from '../client/index.js';
import type { SequenceSettings } from './sequence-source.js';

export type Protocol = 'http' | 'grpc';
export type RequestDistribution = 'constant' | 'poisson';

/** What to sweep: concurrency levels (closed loop) or request rates (open loop). */
export type LoadRange =
  | { readonly mode: 'concurrency'; readonly start: number; readonly end: number; readonly step: number }
  | { readonly mode: 'request-rate'; readonly start: number; readonly end: number; readonly step: number; readonly distribution: RequestDistribution };

export type InputDataSource = { readonly kind: 'random' } | { readonly kind: 'zero' } | { readonly kind: 'file'; readonly path: string };

/** `nereid perf` settings, after perf_analyzer's flags (docs/cli.md of triton-inference-server/client). */
export interface PerfOptions {
  readonly modelName: string;
  readonly modelVersion: string | undefined;
  readonly protocol: Protocol;
  /** `host:port` or a URL; by default localhost:8000 (HTTP) or localhost:8001 (gRPC). */
  readonly url: string;
  readonly batchSize: number;
  readonly range: LoadRange;
  /** Shapes of variable-size inputs, without the batch dimension. */
  readonly shapes: ReadonlyMap<string, readonly number[]>;
  readonly inputData: InputDataSource;
  /** Length of random BYTES elements. */
  readonly stringLength: number;
  readonly measurementIntervalMs: number;
  /** Windows agree when max/min of both throughput and latency is within this percentage. */
  readonly stabilityPercentage: number;
  readonly maxTrials: number;
  /** Latency percentile used for stability and the threshold; undefined: the average. */
  readonly percentile: number | undefined;
  /** Stop the sweep once latency passes this; 0: never. */
  readonly latencyThresholdMs: number;
  /** HTTP: inputs (and by default outputs) as binary data or JSON. */
  readonly isInputBinary: boolean;
  readonly isOutputBinary: boolean;
  readonly compression: Compression;
  /** gRPC: send over one ModelStreamInfer stream instead of unary calls. */
  readonly isStreaming: boolean;
  /** `--shared-memory system`: inputs and outputs in system shared memory regions the tool registers. */
  readonly sharedMemory: 'none' | 'system';
  /** `--output-shared-memory-size`: bytes of region for each output (perf_analyzer's default 102400). */
  readonly outputSharedMemoryBytes: number;
  readonly headers: Readonly<Record<string, string>>;
  readonly csvFile: string | undefined;
  /** '-' for stdout. */
  readonly jsonFile: string | undefined;
  readonly plotFile: string | undefined;
  readonly isVerbose: boolean;
  /** Seeds random input data and Poisson arrivals; undefined: a random seed. */
  readonly seed: number | undefined;
  /** How requests to a sequence model (one with sequence_batching) form sequences. */
  readonly sequence: SequenceSettings;
}

export class PerfUsageError extends Error {
  override readonly name = 'PerfUsageError';
}

const FLAGS = {
  'model-name': { type: 'string', short: 'm', help: 'NAME      the model to measure (required)' },
  'model-version': { type: 'string', short: 'x', help: 'VERSION   a version of it (default: the server picks the latest)' },
  url: { type: 'string', short: 'u', help: 'URL       the server (default localhost:8000 for http, localhost:8001 for grpc)' },
  protocol: { type: 'string', short: 'i', help: 'http|grpc  the protocol (default http)' },
  'batch-size': { type: 'string', short: 'b', help: 'N         batch size of each request (default 1)' },
  'concurrency-range': { type: 'string', help: 'START[:END[:STEP]]  requests kept in flight, swept (default 1); END 0: until --latency-threshold' },
  'request-rate-range': { type: 'string', help: 'START[:END[:STEP]]  requests sent per second, open loop, swept' },
  'request-distribution': { type: 'string', help: 'constant|poisson  intervals between requests at a request rate (default constant)' },
  shape: { type: 'string', multiple: true, help: 'NAME:D1,D2  the shape of a variable-size input, without the batch dimension (repeatable)' },
  'input-data': { type: 'string', help: 'random|zero|FILE.json  input data (default random); FILE: perf_analyzer\'s {"data": [...]} format' },
  'string-length': { type: 'string', help: 'N         length of random BYTES elements (default 128)' },
  'measurement-interval': { type: 'string', short: 'p', help: 'MS        length of a measurement window (default 5000)' },
  'stability-percentage': { type: 'string', short: 's', help: 'PCT       the last 3 windows must agree within this (default 10)' },
  'max-trials': { type: 'string', short: 'r', help: 'N         most windows per step before giving up on stability (default 10)' },
  percentile: { type: 'string', help: 'P         judge stability and the threshold on this latency percentile (default: the average)' },
  'latency-threshold': { type: 'string', short: 'l', help: 'MS        stop the sweep once latency exceeds this (default 0: never)' },
  'input-tensor-format': { type: 'string', help: 'binary|json  HTTP: how inputs travel (default binary)' },
  'output-tensor-format': { type: 'string', help: 'binary|json  HTTP: how outputs come back (default binary)' },
  compression: { type: 'string', help: 'none|gzip|deflate  compress requests (and HTTP responses) (default none)' },
  streaming: { type: 'boolean', help: '          gRPC: send on one ModelStreamInfer stream' },
  'shared-memory': { type: 'string', help: 'none|system  pass inputs and outputs in system shared memory regions (default none; the server needs --allow-client-shm)' },
  'output-shared-memory-size': { type: 'string', help: 'BYTES     region size for each output with --shared-memory system (default 102400)' },
  header: { type: 'string', short: 'H', multiple: true, help: "'NAME:VALUE'  an extra HTTP header (repeatable)" },
  'latency-report-file': { type: 'string', short: 'f', help: 'FILE      write the results as CSV' },
  json: { type: 'string', help: '[FILE]    write the results as JSON to FILE, or without FILE to stdout instead of the table' },
  plot: { type: 'string', help: 'FILE      write the latency-throughput curve: FILE.svg or FILE.html' },
  seed: { type: 'string', help: 'N         seed random input data and Poisson arrivals (default: random)' },
  'sequence-length': { type: 'string', help: 'N         sequence models: base number of requests per sequence (default 20)' },
  'sequence-length-variation': { type: 'string', help: 'PCT       sequence models: each length within ± this of the base (default 20)' },
  'sequence-id-range': { type: 'string', help: 'START[:END]  sequence models: correlation ids from START, END excluded (default 1, no end)' },
  'num-of-sequences': { type: 'string', help: 'N         sequence models, request-rate mode: live sequences (default 4)' },
  'serial-sequences': { type: 'boolean', help: '          sequence models: one request in flight per sequence (always so here)' },
  verbose: { type: 'boolean', short: 'v', help: '          print every measurement window' },
  help: { type: 'boolean', short: 'h', help: '          this help' },
} as const;

/** `nereid perf --help`. */
export function perfUsage(): string {
  const lines = Object.entries(FLAGS).map(([name, flag]) => {
    const short = 'short' in flag ? `-${flag.short}, ` : '    ';
    const [argument, ...rest] = flag.help.split('  ');
    const text = rest.join('  ').trim();
    return `  ${short}--${name} ${argument!.trim()}`.padEnd(48) + text;
  });
  return `Usage: nereid perf -m MODEL [flags]

Measures a model's throughput and latency on a KServe v2 server (Nereid, Triton, ...), in the spirit of
perf_analyzer: for each concurrency or request rate it runs measurement windows until three agree, then
reports throughput, client latency percentiles and the server's queue and compute times (statistics
extension). Progress goes to stderr; the table to stdout.

Flags:
${lines.join('\n')}
`;
}

function usage(message: string): PerfUsageError {
  return new PerfUsageError(`nereid perf: ${message}`);
}

function parseNumber(flag: string, text: string | undefined, check: { fallback: number; min: number; max?: number; isInteger?: boolean }): number {
  if (text === undefined) return check.fallback;
  const value = Number(text);
  const kind = check.isInteger === true ? 'an integer' : 'a number';
  if (text.trim() === '' || !Number.isFinite(value) || (check.isInteger === true && !Number.isInteger(value)) || value < check.min || (check.max !== undefined && value > check.max)) {
    throw usage(`--${flag} takes ${kind} from ${check.min}${check.max !== undefined ? ` to ${check.max}` : ' up'}, got '${text}'`);
  }
  return value;
}

function parseChoice<T extends string>(flag: string, text: string | undefined, choices: readonly T[], fallback: T): T {
  if (text === undefined) return fallback;
  if (!(choices as readonly string[]).includes(text)) throw usage(`--${flag} takes ${choices.join(', ')}, got '${text}'`);
  return text as T;
}

/** `START[:END[:STEP]]`: END defaults to START (one step), STEP to 1. */
function parseRange(flag: string, text: string, isInteger: boolean): { start: number; end: number; step: number } {
  const parts = text.split(':');
  const numbers = parts.map((part) => Number(part));
  const isValid =
    parts.length <= 3 &&
    parts.every((part) => part.trim() !== '') &&
    numbers.every((value) => Number.isFinite(value) && value >= 0 && (!isInteger || Number.isInteger(value)));
  if (!isValid) throw usage(`--${flag} takes START[:END[:STEP]] with non-negative ${isInteger ? 'integers' : 'numbers'}, got '${text}'`);
  const [start, end = start, step = 1] = numbers as [number, number?, number?];
  if (start <= 0) throw usage(`--${flag}: START must be above 0, got '${text}'`);
  if (step <= 0) throw usage(`--${flag}: STEP must be above 0, got '${text}'`);
  if (end !== 0 && end < start) throw usage(`--${flag}: END must be at least START (or 0 to sweep until --latency-threshold), got '${text}'`);
  return { start, end, step };
}

function parseShape(text: string): [string, number[]] {
  const colon = text.lastIndexOf(':');
  const dims = colon > 0 ? text.slice(colon + 1).split(',').map((dim) => Number(dim)) : [];
  if (colon <= 0 || dims.length === 0 || !dims.every((dim) => Number.isInteger(dim) && dim >= 0)) {
    throw usage(`--shape takes NAME:D1,D2,... with non-negative integer dimensions, got '${text}'`);
  }
  return [text.slice(0, colon), dims];
}

/**
 * NOTE: node:util parseArgs has no optional values, so a bare `--json` (followed by nothing or by
 * another flag) becomes `--json=-`, stdout.
 */
function withJsonDefault(args: readonly string[]): string[] {
  return args.map((arg, index) => (arg === '--json' && (index + 1 >= args.length || args[index + 1]!.startsWith('-')) ? '--json=-' : arg));
}

/** Reads `nereid perf` flags; every default and cross-flag check is here. */
export function parsePerfArgs(args: readonly string[]): PerfOptions | 'help' {
  const values = parseFlags(withJsonDefault(args), FLAGS, 'perf', usage);
  if (values.help === true) return 'help';
  const string = (name: keyof typeof FLAGS): string | undefined => values[name] as string | undefined;
  const modelName = string('model-name');
  if (modelName === undefined || modelName === '') throw usage('-m MODEL is required (the model to measure)');
  const protocol = parseChoice('protocol', string('protocol'), ['http', 'grpc'] as const, 'http');
  const concurrencyText = string('concurrency-range');
  const rateText = string('request-rate-range');
  if (concurrencyText !== undefined && rateText !== undefined) throw usage('give --concurrency-range or --request-rate-range, not both');
  const distribution = parseChoice('request-distribution', string('request-distribution'), ['constant', 'poisson'] as const, 'constant');
  const range: LoadRange =
    rateText !== undefined
      ? { mode: 'request-rate', ...parseRange('request-rate-range', rateText, false), distribution }
      : { mode: 'concurrency', ...parseRange('concurrency-range', concurrencyText ?? '1', true) };
  const latencyThresholdMs = parseNumber('latency-threshold', string('latency-threshold'), { fallback: 0, min: 0 });
  if (range.end === 0 && latencyThresholdMs === 0) throw usage('an open-ended range (END 0) needs --latency-threshold, which ends the sweep');
  const inputDataText = string('input-data') ?? 'random';
  const inputData: InputDataSource = inputDataText === 'random' || inputDataText === 'zero' ? { kind: inputDataText } : { kind: 'file', path: inputDataText };
  const inputFormat = parseChoice('input-tensor-format', string('input-tensor-format'), ['binary', 'json'] as const, 'binary');
  const outputFormat = parseChoice('output-tensor-format', string('output-tensor-format'), ['binary', 'json'] as const, 'binary');
  const isStreaming = values.streaming === true;
  if (isStreaming && protocol !== 'grpc') throw usage('--streaming needs -i grpc');
  if (protocol === 'grpc' && (inputFormat === 'json' || outputFormat === 'json')) throw usage('--input-tensor-format and --output-tensor-format json are for -i http');
  const sharedMemoryText = string('shared-memory');
  if (sharedMemoryText === 'cuda') throw usage('--shared-memory cuda needs a GPU; this tool has none: use system or none');
  const sharedMemory = parseChoice('shared-memory', sharedMemoryText, ['none', 'system'] as const, 'none');
  const outputSharedMemoryBytes = parseNumber('output-shared-memory-size', string('output-shared-memory-size'), { fallback: 102_400, min: 0, isInteger: true });
  if (sharedMemory === 'none' && string('output-shared-memory-size') !== undefined) throw usage('--output-shared-memory-size needs --shared-memory system');
  const headers: Record<string, string> = {};
  for (const header of (values.header as string[] | undefined) ?? []) {
    const colon = header.indexOf(':');
    if (colon <= 0) throw usage(`-H takes 'NAME:VALUE', got '${header}'`);
    headers[header.slice(0, colon).trim().toLowerCase()] = header.slice(colon + 1).trim();
  }
  const plotFile = string('plot');
  if (plotFile !== undefined && !/\.(svg|html?)$/i.test(plotFile)) throw usage(`--plot writes an .svg or .html file, got '${plotFile}'`);
  const percentileText = string('percentile');
  const seedText = string('seed');
  const sequence = parseSequenceSettings(string, range);
  return {
    modelName,
    modelVersion: string('model-version'),
    protocol,
    url: string('url') ?? (protocol === 'http' ? 'localhost:8000' : 'localhost:8001'),
    batchSize: parseNumber('batch-size', string('batch-size'), { fallback: 1, min: 1, isInteger: true }),
    range,
    shapes: new Map(((values.shape as string[] | undefined) ?? []).map(parseShape)),
    inputData,
    stringLength: parseNumber('string-length', string('string-length'), { fallback: 128, min: 0, isInteger: true }),
    measurementIntervalMs: parseNumber('measurement-interval', string('measurement-interval'), { fallback: 5000, min: 1, isInteger: true }),
    stabilityPercentage: parseNumber('stability-percentage', string('stability-percentage'), { fallback: 10, min: 0 }),
    maxTrials: parseNumber('max-trials', string('max-trials'), { fallback: 10, min: 1, isInteger: true }),
    percentile: percentileText === undefined ? undefined : parseNumber('percentile', percentileText, { fallback: 0, min: 1, max: 99, isInteger: true }),
    latencyThresholdMs,
    isInputBinary: inputFormat === 'binary',
    isOutputBinary: outputFormat === 'binary',
    compression: parseChoice('compression', string('compression'), ['none', 'gzip', 'deflate'] as const, 'none'),
    isStreaming,
    sharedMemory,
    outputSharedMemoryBytes,
    headers,
    csvFile: string('latency-report-file'),
    jsonFile: string('json'),
    plotFile,
    isVerbose: values.verbose === true,
    seed: seedText === undefined ? undefined : parseNumber('seed', seedText, { fallback: 0, min: 0, isInteger: true }),
    sequence,
  };
}

/** perf_analyzer's sequence flags; a length of 0 means the default 20, as there. */
function parseSequenceSettings(string: (name: keyof typeof FLAGS) => string | undefined, range: LoadRange): SequenceSettings {
  const length = parseNumber('sequence-length', string('sequence-length'), { fallback: 20, min: 0, isInteger: true }) || 20;
  const lengthVariationPct = parseNumber('sequence-length-variation', string('sequence-length-variation'), { fallback: 20, min: 0 });
  const numOfSequences = parseNumber('num-of-sequences', string('num-of-sequences'), { fallback: 4, min: 1, isInteger: true });
  const idText = string('sequence-id-range') ?? '1';
  const [startText, endText, ...rest] = idText.split(':');
  const idStart = Number(startText);
  const idEnd = endText === undefined ? undefined : Number(endText);
  if (rest.length > 0 || !Number.isSafeInteger(idStart) || idStart < 1 || (idEnd !== undefined && (!Number.isSafeInteger(idEnd) || idEnd <= idStart))) {
    throw usage(`--sequence-id-range takes START[:END] with 1 <= START < END, got '${idText}'`);
  }
  // As perf_analyzer: a range too small for the sequences kept live would reuse a live id.
  const live = range.mode === 'request-rate' ? numOfSequences : range.end === 0 ? Number.POSITIVE_INFINITY : range.end;
  if (idEnd !== undefined && idEnd - idStart < live) {
    throw usage(`--sequence-id-range ${idText} holds ${idEnd - idStart} ids, fewer than the ${Number.isFinite(live) ? live : 'unbounded number of'} sequences kept live`);
  }
  return { length, lengthVariationPct, idStart, idEnd, numOfSequences };
}
