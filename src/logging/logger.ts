import { appendFileSync } from 'node:fs';

/**
 * Log lines in Triton's layout, so that tools reading Triton's logs read ours:
 * `I1130 06:41:26.123456 4242 repository] loaded 'simple' version 1` (default), or with an
 * ISO 8601 time stamp (`--log-format ISO8601`). Severity letters: I, W, E; verbose lines are I.
 * NOTE: a logger of our own rather than pino: the layout is Triton's, not JSON, and the writes are
 * synchronous so a line is never lost when the process exits on a signal.
 */
export type LogFormat = 'default' | 'ISO8601';

export interface LoggerOptions {
  readonly info: boolean;
  readonly warning: boolean;
  readonly error: boolean;
  /** Lines logged with `verbose(level, ...)` appear when level <= verboseLevel. */
  readonly verboseLevel: number;
  readonly format: LogFormat;
  /** Append to this file instead of writing to stderr. */
  readonly file?: string;
}

export interface Logger {
  info(component: string, message: string): void;
  warning(component: string, message: string): void;
  error(component: string, message: string): void;
  verbose(level: number, component: string, message: string): void;
  /** Whether `verbose(level, ...)` lines are written now, so a caller on a hot path can skip building them; absent: assume so. */
  isVerbose?(level: number): boolean;
}

/** A logger whose settings can be read and changed while it runs (Triton's logging extension). */
export interface ConfigurableLogger extends Logger {
  settings(): LoggerOptions;
  /** Applies the given settings, keeps the others, and returns them all. */
  configure(changes: Partial<LoggerOptions>): LoggerOptions;
}

export function isConfigurableLogger(logger: Logger): logger is ConfigurableLogger {
  return 'configure' in logger && 'settings' in logger;
}

const pad = (value: number, width = 2): string => String(value).padStart(width, '0');

function formatTime(now: Date, format: LogFormat, microseconds: number): string {
  if (format === 'ISO8601') return now.toISOString().replace(/\.\d{3}Z$/, `.${pad(microseconds, 6)}Z`);
  return (
    `${pad(now.getUTCMonth() + 1)}${pad(now.getUTCDate())} ` +
    `${pad(now.getUTCHours())}:${pad(now.getUTCMinutes())}:${pad(now.getUTCSeconds())}.${pad(microseconds, 6)}`
  );
}

const ESCAPES: Readonly<Record<string, string>> = { '\n': '\\n', '\r': '\\r', '\t': '\\t' };
/** C0 and C1 control characters, DEL and the Unicode line and paragraph separators. */
// eslint-disable-next-line no-control-regex -- matching control characters is the point
const CONTROL_CHARACTERS = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/g;

/**
 * Escapes what would break or forge a log line (`\n` → `\\n`, other controls as `\\u001b`), so one call
 * is one line whatever a client put in a request id or model name. NOTE: done here, on every message,
 * rather than at each place a client string is logged: no call site can forget it.
 */
export function escapeLogText(text: string): string {
  return text.replace(CONTROL_CHARACTERS, (char) => ESCAPES[char] ?? `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

export function createLogger(initial: LoggerOptions): ConfigurableLogger {
  let options = { ...initial };
  /** The log file that could not be written: lines go to stderr until the settings name another. */
  let failedFile: string | undefined;
  const format = (severity: 'I' | 'W' | 'E', component: string, message: string): string => {
    const nowMs = performance.timeOrigin + performance.now();
    const now = new Date(nowMs);
    const microseconds = Math.floor((nowMs % 1000) * 1000);
    const stamp = formatTime(now, options.format, microseconds);
    return options.format === 'ISO8601'
      ? `${stamp} ${severity} ${process.pid} ${component}] ${escapeLogText(message)}\n`
      : `${severity}${stamp} ${process.pid} ${component}] ${escapeLogText(message)}\n`;
  };
  // A log file that cannot be opened or written (a missing folder, a directory, a full disk) never takes
  // the server down: the line and those after it go to stderr, after one line that says why.
  const write = (severity: 'I' | 'W' | 'E', component: string, message: string): void => {
    const line = format(severity, component, message);
    if (options.file !== undefined && options.file !== failedFile) {
      try {
        appendFileSync(options.file, line);
        return;
      } catch (error) {
        failedFile = options.file;
        const reason = (error as Error).message;
        process.stderr.write(format('E', 'logging', `cannot write the log file '${failedFile}' (${reason}); logging to standard error instead`));
      }
    }
    process.stderr.write(line);
  };
  return {
    info: (component, message) => options.info && write('I', component, message),
    warning: (component, message) => options.warning && write('W', component, message),
    error: (component, message) => options.error && write('E', component, message),
    verbose: (level, component, message) => level <= options.verboseLevel && write('I', component, message),
    isVerbose: (level) => level <= options.verboseLevel,
    settings: () => ({ ...options }),
    configure: (changes) => {
      options = { ...options, ...changes };
      if ('file' in changes) failedFile = undefined;
      if (options.file === '' || options.file === undefined) {
        const { file: _file, ...rest } = options;
        options = rest;
      }
      return { ...options };
    },
  };
}

/** A logger that drops everything: for tests and library use without output. */
export const silentLogger: Logger = { info() {}, warning() {}, error() {}, verbose() {} };
