import type { NereidError } from '../kernel/errors.js';
import {
  DEFAULT_OPENTELEMETRY_URL,
  DEFAULT_TRACE_SETTINGS,
  type OpenTelemetrySettings,
  type TraceLevel,
  type TraceMode,
  type TraceSettings,
  isTraceLevelOff,
} from '../kernel/trace-settings.js';

/** The trace flags as given: `--trace-config` entries, and Triton's deprecated single flags. */
export interface TraceFlags {
  readonly config: readonly string[];
  readonly file?: string;
  readonly level?: readonly string[];
  readonly rate?: string;
  readonly count?: string;
  readonly logFrequency?: string;
}

export interface TraceConfig {
  readonly settings: TraceSettings;
  readonly mode: TraceMode;
  /** The OpenTelemetry mode's settings; present in that mode only. */
  readonly openTelemetry?: OpenTelemetrySettings;
  /** One line per deprecated flag used, and when tracing is on without a file. */
  readonly warnings: readonly string[];
}

const GLOBAL_KEYS = ['level', 'rate', 'count', 'mode'];
const TRITON_KEYS = ['file', 'log-frequency'];
const OPENTELEMETRY_KEYS = ['url', 'resource', 'bsp_max_queue_size', 'bsp_schedule_delay', 'bsp_max_export_batch_size'];
const MODE_KEYS: Readonly<Record<string, readonly string[]>> = { triton: TRITON_KEYS, opentelemetry: OPENTELEMETRY_KEYS };

/**
 * `--trace-config` in Triton's syntax (docs/user_guide/trace.md): `<setting>=<value>` for the global
 * settings (level, rate, count, mode), `triton,<setting>=<value>` for the Triton mode's (file,
 * log-frequency) and `opentelemetry,<setting>=<value>` for the OpenTelemetry mode's (url, resource,
 * bsp_*); `level` and `resource` may be given several times (TIMESTAMPS and TENSORS add up). Triton's
 * deprecated `--trace-file`, `--trace-level`, `--trace-rate`, `--trace-count` and `--trace-log-frequency`
 * mean the same, with a warning; `--trace-config` wins where both are given.
 */
export function parseTraceConfig(flags: TraceFlags, fail: (message: string) => NereidError): TraceConfig {
  const warnings: string[] = [];
  const values = new Map<string, string[]>();
  const put = (key: string, value: string): void => void values.set(key, [...(values.get(key) ?? []), value]);
  const deprecated: Array<[string, string | readonly string[] | undefined, string]> = [
    ['trace-file', flags.file, 'file'],
    ['trace-level', flags.level, 'level'],
    ['trace-rate', flags.rate, 'rate'],
    ['trace-count', flags.count, 'count'],
    ['trace-log-frequency', flags.logFrequency, 'log-frequency'],
  ];
  for (const [flag, given, key] of deprecated) {
    if (given === undefined) continue;
    for (const value of typeof given === 'string' ? [given] : given) put(key, value);
    const mode = TRITON_KEYS.includes(key) ? 'triton,' : '';
    warnings.push(`--${flag} is deprecated (as in Triton): use --trace-config ${mode}${key}=<value>`);
  }
  const fromConfig = new Set<string>();
  for (const entry of flags.config) {
    const comma = entry.indexOf(',');
    const equals = entry.indexOf('=');
    const hasMode = comma !== -1 && comma < equals;
    // Trace modes in any case, as Triton's ParseTraceModeOption reads them.
    const mode = hasMode ? entry.slice(0, comma).toLowerCase() : undefined;
    const setting = hasMode ? entry.slice(comma + 1) : entry;
    const at = setting.indexOf('=');
    if (at <= 0) throw fail(`--trace-config '${entry}': expected [<mode>,]<setting>=<value>, e.g. triton,file=/tmp/trace.json or rate=100`);
    const key = setting.slice(0, at);
    const value = key === 'mode' ? setting.slice(at + 1).toLowerCase() : setting.slice(at + 1);
    if (mode !== undefined && MODE_KEYS[mode] === undefined) throw fail(`--trace-config '${entry}': unknown trace mode '${mode}'; expected triton or opentelemetry`);
    const known = mode === undefined ? GLOBAL_KEYS : MODE_KEYS[mode]!;
    if (!known.includes(key)) {
      throw fail(`--trace-config '${entry}': unknown setting '${key}'; ${mode === undefined ? 'the global settings are' : `the ${mode} mode takes`} ${known.join(', ')}`);
    }
    if (key === 'mode' && MODE_KEYS[value] === undefined) throw fail(`--trace-config '${entry}': unknown trace mode '${value}'; expected triton or opentelemetry`);
    if (key === 'resource' && value.indexOf('=') <= 0) {
      throw fail(`--trace-config '${entry}': expected opentelemetry,resource=<key>=<value>, e.g. opentelemetry,resource=service.name=triton`);
    }
    // --trace-config replaces what the deprecated flags said.
    if (!fromConfig.has(key)) values.delete(key);
    fromConfig.add(key);
    put(key, value);
  }
  const integer = (key: string, min: number): number | undefined => {
    const text = values.get(key)?.at(-1);
    if (text === undefined) return undefined;
    const value = Number(text);
    if (!/^-?[0-9]+$/.test(text) || value < min || value > 2 ** 31 - 1) throw fail(`--trace-config ${OPENTELEMETRY_KEYS.includes(key) ? 'opentelemetry,' : ''}${key}=${text}: expected an integer from ${min} to ${2 ** 31 - 1}`);
    return value;
  };
  let level: TraceLevel = DEFAULT_TRACE_SETTINGS.level;
  // Triton's ParseTraceLevelOption: any case; its older names too (false and off, true, on, min and max).
  for (const name of values.get('level') ?? []) {
    const lower = name.toLowerCase();
    if (lower === 'off' || lower === 'false') level = { timestamps: false, tensors: false };
    else if (['timestamps', 'true', 'on', 'min', 'max'].includes(lower)) level = { ...level, timestamps: true };
    else if (lower === 'tensors') level = { ...level, tensors: true };
    else throw fail(`Bad option: "--trace-config level".\ninvalid value for trace level option: ${lower} (expected OFF, TIMESTAMPS or TENSORS)`);
  }
  const settings: TraceSettings = {
    level,
    rate: integer('rate', 0) ?? DEFAULT_TRACE_SETTINGS.rate,
    count: integer('count', -1) ?? DEFAULT_TRACE_SETTINGS.count,
    logFrequency: integer('log-frequency', 0) ?? DEFAULT_TRACE_SETTINGS.logFrequency,
    file: values.get('file')?.at(-1) ?? DEFAULT_TRACE_SETTINGS.file,
  };
  const mode = (values.get('mode')?.at(-1) ?? 'triton') as TraceMode;
  if (mode === 'opentelemetry') {
    const openTelemetry = parseOpenTelemetrySettings(values, integer, fail);
    if (settings.level.tensors) warnings.push('Tensor level tracing is not supported by the mode: OPENTELEMETRY (the TENSORS level records nothing)');
    return { settings, mode, openTelemetry, warnings };
  }
  if (OPENTELEMETRY_KEYS.some((key) => values.has(key))) warnings.push('opentelemetry,<setting> is given but the trace mode is triton: add --trace-config mode=opentelemetry');
  if (!isTraceLevelOff(settings.level) && settings.file === '') {
    warnings.push('tracing is on but no trace file is set (--trace-config triton,file=<path>): traces are collected and written nowhere');
  }
  return { settings, mode, warnings };
}

function parseOpenTelemetrySettings(
  values: ReadonlyMap<string, readonly string[]>,
  integer: (key: string, min: number) => number | undefined,
  fail: (message: string) => NereidError,
): OpenTelemetrySettings {
  const url = values.get('url')?.at(-1) ?? DEFAULT_OPENTELEMETRY_URL;
  if (!URL.canParse(url) || !/^https?:$/.test(new URL(url).protocol)) {
    throw fail(`--trace-config opentelemetry,url=${url}: expected the http:// or https:// URL of an OTLP/HTTP receiver, e.g. ${DEFAULT_OPENTELEMETRY_URL}`);
  }
  const resource: Record<string, string> = {};
  for (const pair of values.get('resource') ?? []) {
    const at = pair.indexOf('=');
    resource[pair.slice(0, at)] = pair.slice(at + 1);
  }
  const maxQueueSize = integer('bsp_max_queue_size', 1);
  const scheduleDelayMs = integer('bsp_schedule_delay', 0);
  const maxExportBatchSize = integer('bsp_max_export_batch_size', 1);
  if (maxExportBatchSize !== undefined && maxExportBatchSize > (maxQueueSize ?? 2048)) {
    throw fail(`--trace-config opentelemetry,bsp_max_export_batch_size=${maxExportBatchSize}: must be less than or equal to bsp_max_queue_size (${maxQueueSize ?? 2048})`);
  }
  return {
    url,
    resource,
    ...(maxQueueSize !== undefined ? { bspMaxQueueSize: maxQueueSize } : {}),
    ...(scheduleDelayMs !== undefined ? { bspScheduleDelayMs: scheduleDelayMs } : {}),
    ...(maxExportBatchSize !== undefined ? { bspMaxExportBatchSize: maxExportBatchSize } : {}),
  };
}
