import { NereidError } from '../../kernel/errors.js';
import type { ModelControl } from '../../kernel/model-control.js';
import { type CustomMetricScope, METRIC_KINDS } from '../../metrics/custom-metrics.js';
import { FrameWriter, type FrameReader } from './frame-codec.js';
import { ERROR_CODES, Kind } from './stub-protocol.js';
import type { SendToStub } from './bls-bridge.js';

/** What a Python process may ask of the server besides inference: its custom metrics and the model loading API. */
export interface StubApiTarget {
  /** The process's own metrics (closed when it exits); absent: the server serves no metrics. */
  readonly metrics: CustomMetricScope | undefined;
  readonly control: ModelControl | undefined;
}

type Arguments = Record<string, unknown>;
type Method = (target: StubApiTarget, args: Arguments) => unknown;

const number = (args: Arguments, key: string): number => {
  const value = args[key];
  if (typeof value !== 'number') throw new NereidError('INVALID_ARG', `'${key}' must be a number, got ${JSON.stringify(value)}`);
  return value;
};
const string = (args: Arguments, key: string): string => {
  const value = args[key];
  if (typeof value !== 'string') throw new NereidError('INVALID_ARG', `'${key}' must be a str, got ${JSON.stringify(value)}`);
  return value;
};

function metricsOf(target: StubApiTarget): CustomMetricScope {
  if (target.metrics === undefined) throw new NereidError('UNAVAILABLE', 'custom metrics are not available: the server runs with --allow-metrics=false');
  return target.metrics;
}

function controlOf(target: StubApiTarget): ModelControl {
  if (target.control === undefined) throw new NereidError('UNAVAILABLE', 'the model loading API is not available in this server');
  return target.control;
}

/** The calls by name, with their JSON arguments (python/nereid_stub/server_api.py makes them). */
const METHODS: Record<string, Method> = {
  metric_family_new: (target, args) => {
    const kind = METRIC_KINDS[number(args, 'kind')];
    if (kind === undefined) throw new NereidError('INVALID_ARG', 'Unsupported kind passed to MetricFamily constructor.');
    return { id: metricsOf(target).createFamily(string(args, 'name'), string(args, 'description'), kind) };
  },
  metric_family_delete: (target, args) => metricsOf(target).deleteFamily(number(args, 'id')),
  metric_new: (target, args) => {
    const buckets = args.buckets;
    if (buckets !== null && buckets !== undefined && !(Array.isArray(buckets) && buckets.every((bound) => typeof bound === 'number'))) {
      throw new NereidError('INVALID_ARG', `Metric buckets must be a list of numbers, got ${JSON.stringify(buckets)}`);
    }
    const labels = (args.labels ?? {}) as Record<string, string>;
    return { id: metricsOf(target).createMetric(number(args, 'family'), labels, (buckets ?? undefined) as number[] | undefined) };
  },
  metric_delete: (target, args) => metricsOf(target).deleteMetric(number(args, 'id')),
  metric_increment: (target, args) => metricsOf(target).increment(number(args, 'id'), number(args, 'value')),
  metric_set: (target, args) => metricsOf(target).set(number(args, 'id'), number(args, 'value')),
  metric_observe: (target, args) => metricsOf(target).observe(number(args, 'id'), number(args, 'value')),
  metric_value: (target, args) => ({ value: metricsOf(target).value(number(args, 'id')) }),
  load_model: async (target, args) => {
    const parameters: Record<string, string | Uint8Array> = {};
    if (typeof args.config === 'string' && args.config !== '') parameters.config = args.config;
    for (const [path, base64] of Object.entries((args.files ?? {}) as Record<string, string>)) parameters[path] = Buffer.from(base64, 'base64');
    await controlOf(target).loadModel(string(args, 'name'), parameters);
  },
  unload_model: (target, args) => controlOf(target).unloadModel(string(args, 'name'), { unloadDependents: args.unload_dependents === true }),
  is_model_ready: (target, args) => {
    const version = string(args, 'version');
    if (version !== '' && !/^\d+$/.test(version)) throw new NereidError('INVALID_ARG', `model version must be a number or empty, got '${version}'`);
    return { ready: controlOf(target).isModelReady(string(args, 'name'), version === '' ? undefined : Number(version)) };
  },
};

/**
 * An API_REQUEST from a Python process: runs the named call and answers with API_RESPONSE, its result
 * as JSON or its error with Triton's code (raised in Python as TritonModelException).
 */
export function runStubApiCall(reader: FrameReader, target: StubApiTarget, send: SendToStub): void {
  const callId = reader.u32();
  const method = reader.str();
  const argsJson = reader.str();
  const answer = async (): Promise<unknown> => {
    const call = METHODS[method];
    if (call === undefined) throw new NereidError('INTERNAL', `unknown server call '${method}' from the Python stub`);
    return call(target, JSON.parse(argsJson) as Arguments);
  };
  answer().then(
    (result) => send(Kind.ApiResponse, new FrameWriter().u32(callId).u8(0).str(JSON.stringify(result ?? {}))),
    (error: unknown) => {
      const failure = error instanceof NereidError ? error : new NereidError('INTERNAL', (error as Error).message);
      send(Kind.ApiResponse, new FrameWriter().u32(callId).u8(1).u8(Math.max(0, ERROR_CODES.indexOf(failure.status))).str(failure.message));
    },
  );
}
