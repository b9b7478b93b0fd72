import { NereidError } from './errors.js';

/** What a trace records: TIMESTAMPS, TENSORS, both, or nothing (OFF). */
export interface TraceLevel {
  readonly timestamps: boolean;
  readonly tensors: boolean;
}

/** Triton's trace settings (docs/protocol/extension_trace.md), for the server or one model. */
export interface TraceSettings {
  readonly level: TraceLevel;
  /** One request in `rate` is traced (the rate-th, the 2×rate-th...). */
  readonly rate: number;
  /** How many more traces to collect; -1 for no limit. */
  readonly count: number;
  /** Write the traces collected so far to `<file>.<n>` every that many traces; 0: to `<file>` at shutdown. */
  readonly logFrequency: number;
  readonly file: string;
}

/** A change of settings: a value sets it, null clears it (a model falls back to the server's, the server to its start-up value). */
export type TraceSettingsUpdate = { readonly [K in keyof TraceSettings]?: TraceSettings[K] | null };

export const OFF: TraceLevel = { timestamps: false, tensors: false };

export const DEFAULT_TRACE_SETTINGS: TraceSettings = { level: OFF, rate: 1000, count: -1, logFrequency: 0, file: '' };

export const isTraceLevelOff = (level: TraceLevel): boolean => !level.timestamps && !level.tensors;

/** The level names as Triton lists them: ["OFF"], or TIMESTAMPS and/or TENSORS. */
export function traceLevelNames(level: TraceLevel): string[] {
  if (isTraceLevelOff(level)) return ['OFF'];
  return [...(level.timestamps ? ['TIMESTAMPS'] : []), ...(level.tensors ? ['TENSORS'] : [])];
}

/**
 * Level names to a level, as Triton's HTTP and gRPC handlers read them: OFF alone turns tracing off,
 * TIMESTAMPS and TENSORS add up, and names it does not know are passed over. Undefined when no known
 * name was given (the level is left as it is).
 */
export function parseTraceLevel(names: readonly string[]): TraceLevel | undefined {
  let level: TraceLevel | undefined;
  for (const name of names) {
    if (name === 'OFF') {
      if (names.length !== 1) throw new NereidError('INVALID_ARG', "Expect only one trace level 'OFF' is specified");
      level = OFF;
    } else if (name === 'TIMESTAMPS') {
      level = { timestamps: true, tensors: level?.tensors ?? false };
    } else if (name === 'TENSORS') {
      level = { timestamps: level?.timestamps ?? false, tensors: true };
    }
  }
  return level;
}

const UINT32_MAX = 4_294_967_295;
const INT32_MAX = 2_147_483_647;

/** An integer setting in Triton's words (server src/http_server.cc `HandleTrace`). */
function parseIntegerSetting(key: 'trace_rate' | 'trace_count' | 'log_frequency', text: string): number {
  if (!/^\s*[+-]?[0-9]+/.test(text)) throw new NereidError('INVALID_ARG', `Unable to parse '${key}', got: ${text}`);
  const value = Number.parseInt(text, 10);
  const [min, max] = key === 'trace_count' ? [-1, INT32_MAX] : [0, UINT32_MAX];
  if (key === 'trace_count' && value < min && value >= -INT32_MAX - 1) {
    throw new NereidError('INVALID_ARG', `Unable to parse 'trace_count'. Expecting value >= -1, got:${text}`);
  }
  if (value < min || value > max) {
    throw new NereidError('INVALID_ARG', `Unable to parse '${key}', value is out of range [ ${min}, ${max} ], got: ${text}`);
  }
  return value;
}

/**
 * A settings change as both front ends carry it: each setting's values (the level's names, or one
 * value for the others), or null to clear it. Unknown keys are passed over, as in Triton.
 * NOTE: `trace_file` cannot change through the API: a client could otherwise make the server write
 * where it pleases (Triton refuses it too since its 2024 advisory, as it does `log_file`).
 */
export function parseTraceSettingsUpdate(wire: Readonly<Record<string, readonly string[] | null>>): TraceSettingsUpdate {
  const update: { -readonly [K in keyof TraceSettings]?: TraceSettings[K] | null } = {};
  for (const [key, values] of Object.entries(wire)) {
    if (key === 'trace_file') {
      throw new NereidError('UNSUPPORTED', 'trace file location can not be updated through network protocol');
    }
    if (key !== 'trace_level' && key !== 'trace_rate' && key !== 'trace_count' && key !== 'log_frequency') continue;
    if (values === null) {
      update[key === 'trace_level' ? 'level' : key === 'trace_rate' ? 'rate' : key === 'trace_count' ? 'count' : 'logFrequency'] = null;
      continue;
    }
    if (key === 'trace_level') {
      const level = parseTraceLevel(values);
      if (level !== undefined) update.level = level;
      continue;
    }
    if (values.length !== 1) throw new NereidError('INVALID_ARG', `Unable to parse '${key}': expected one value, got ${values.length}`);
    const value = parseIntegerSetting(key, values[0]!);
    if (key === 'trace_rate') update.rate = value;
    else if (key === 'trace_count') update.count = value;
    else update.logFrequency = value;
  }
  return update;
}

/** The settings by Triton's wire names: the level's names, the numbers as strings. */
export function traceSettingsMessage(settings: TraceSettings): { trace_level: string[]; trace_rate: string; trace_count: string; log_frequency: string; trace_file: string } {
  return {
    trace_level: traceLevelNames(settings.level),
    trace_rate: String(settings.rate),
    trace_count: String(settings.count),
    log_frequency: String(settings.logFrequency),
    trace_file: settings.file,
  };
}

/** Where traces go: Triton's JSON file, or spans exported over OTLP/HTTP (fixed at start-up, as in Triton). */
export type TraceMode = 'triton' | 'opentelemetry';

/**
 * The OpenTelemetry mode's settings (`--trace-config opentelemetry,<setting>=<value>`, Triton's
 * docs/user_guide/trace.md). The batch span processor settings left undefined come from
 * OTEL_BSP_* or the SDK's defaults (2048, 5000 ms, 512), as in Triton.
 */
export interface OpenTelemetrySettings {
  /** The OTLP/HTTP receiver's traces endpoint. */
  readonly url: string;
  /** Resource attributes, over `service.name=triton-inference-server` and OTEL_RESOURCE_ATTRIBUTES. */
  readonly resource: Readonly<Record<string, string>>;
  readonly bspMaxQueueSize?: number;
  readonly bspScheduleDelayMs?: number;
  readonly bspMaxExportBatchSize?: number;
}

export const DEFAULT_OPENTELEMETRY_URL = 'http://localhost:4318/v1/traces';
