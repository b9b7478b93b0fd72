import type { NereidError } from '../kernel/errors.js';
import { DEFAULT_TRACE_SETTINGS, type TraceLevel, type TraceSettings, isTraceLevelOff } from '../kernel/trace-settings.js';

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
  /** One line per deprecated flag used, and when tracing is on without a file. */
  readonly warnings: readonly string[];
}

const GLOBAL_KEYS = ['level', 'rate', 'count', 'mode'];
const TRITON_KEYS = ['file', 'log-frequency'];

/**
 * `--trace-config` in Triton's syntax (docs/user_guide/trace.md): `<setting>=<value>` for the global
 * settings (level, rate, count, mode) and `triton,<setting>=<value>` for the Triton mode's (file,
 * log-frequency); `level` may be given several times (TIMESTAMPS and TENSORS add up). Triton's
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
    const mode = hasMode ? entry.slice(0, comma) : undefined;
    const setting = hasMode ? entry.slice(comma + 1) : entry;
    const at = setting.indexOf('=');
    if (at <= 0) throw fail(`--trace-config '${entry}': expected [<mode>,]<setting>=<value>, e.g. triton,file=/tmp/trace.json or rate=100`);
    const key = setting.slice(0, at);
    const value = setting.slice(at + 1);
    if (mode === 'opentelemetry' || (key === 'mode' && value === 'opentelemetry')) {
      throw fail(`--trace-config '${entry}': the opentelemetry trace mode is not implemented; Nereid traces in Triton's mode (triton,file=...)`);
    }
    if (mode !== undefined && mode !== 'triton') throw fail(`--trace-config '${entry}': unknown trace mode '${mode}'; expected triton or opentelemetry`);
    const known = mode === undefined ? GLOBAL_KEYS : TRITON_KEYS;
    if (!known.includes(key)) {
      throw fail(`--trace-config '${entry}': unknown setting '${key}'; ${mode === undefined ? 'the global settings are' : 'the triton mode takes'} ${known.join(', ')}`);
    }
    if (key === 'mode' && value !== 'triton') throw fail(`--trace-config '${entry}': unknown trace mode '${value}'; expected triton or opentelemetry`);
    // --trace-config replaces what the deprecated flags said.
    if (!fromConfig.has(key)) values.delete(key);
    fromConfig.add(key);
    put(key, value);
  }
  const integer = (key: string, min: number): number | undefined => {
    const text = values.get(key)?.at(-1);
    if (text === undefined) return undefined;
    const value = Number(text);
    if (!/^-?[0-9]+$/.test(text) || value < min || value > 2 ** 31 - 1) throw fail(`--trace-config ${key}=${text}: expected an integer from ${min} to ${2 ** 31 - 1}`);
    return value;
  };
  let level: TraceLevel = DEFAULT_TRACE_SETTINGS.level;
  for (const name of values.get('level') ?? []) {
    if (name === 'OFF') level = { timestamps: false, tensors: false };
    else if (name === 'TIMESTAMPS') level = { ...level, timestamps: true };
    else if (name === 'TENSORS') level = { ...level, tensors: true };
    else throw fail(`--trace-config level=${name}: expected OFF, TIMESTAMPS or TENSORS`);
  }
  const settings: TraceSettings = {
    level,
    rate: integer('rate', 0) ?? DEFAULT_TRACE_SETTINGS.rate,
    count: integer('count', -1) ?? DEFAULT_TRACE_SETTINGS.count,
    logFrequency: integer('log-frequency', 0) ?? DEFAULT_TRACE_SETTINGS.logFrequency,
    file: values.get('file')?.at(-1) ?? DEFAULT_TRACE_SETTINGS.file,
  };
  if (!isTraceLevelOff(settings.level) && settings.file === '') {
    warnings.push('tracing is on but no trace file is set (--trace-config triton,file=<path>): traces are collected and written nowhere');
  }
  return { settings, warnings };
}
