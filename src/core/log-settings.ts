import type { ConfigurableLogger, LoggerOptions } from '../logging/logger.js';
import { NereidError } from '../kernel/errors.js';
import { type JsonValue, describeJson } from '../protocol/json-body.js';

/** Triton's logging extension settings (docs/protocol/extension_logging.md), by their wire names. */
export interface LogSettingsMessage {
  log_file: string;
  log_info: boolean;
  log_warning: boolean;
  log_error: boolean;
  log_verbose_level: number;
  log_format: string;
}

const KEYS = ['log_file', 'log_info', 'log_warning', 'log_error', 'log_verbose_level', 'log_format'] as const;

function toMessage(options: LoggerOptions): LogSettingsMessage {
  return {
    log_file: options.file ?? '',
    log_info: options.info,
    log_warning: options.warning,
    log_error: options.error,
    log_verbose_level: options.verboseLevel,
    log_format: options.format,
  };
}

/**
 * Triton's answer to a log_file change through the API since its 2024 advisory on the logging extension
 * (server src/http_server.cc and src/grpc/grpc_server.cc: UNSUPPORTED), with Nereid's hint after it.
 */
export const LOG_FILE_UPDATE_REFUSED =
  'log file location can not be updated through network protocol; start the server with --allow-log-file-update=true to allow it';

/**
 * Reads and changes the server's log settings: the values given are checked and applied, the others
 * kept; every setting comes back. An empty log_file means standard error. A request that names log_file
 * without `isLogFileUpdateAllowed` is refused whole: none of its settings are applied.
 */
export function updateLogSettings(
  logger: ConfigurableLogger | undefined,
  changes: Readonly<Record<string, unknown>>,
  isLogFileUpdateAllowed: boolean,
): LogSettingsMessage {
  if (logger === undefined) throw new NereidError('UNSUPPORTED', 'this server was started with a logger whose settings cannot be changed');
  const next: { -readonly [K in keyof LoggerOptions]?: LoggerOptions[K] } = {};
  for (const [key, value] of Object.entries(changes)) {
    const fail = (expected: string): never => {
      throw new NereidError('INVALID_ARG', `log setting '${key}' must be ${expected}, got ${describeJson(value as JsonValue)}`);
    };
    switch (key) {
      case 'log_file':
        if (!isLogFileUpdateAllowed) throw new NereidError('UNSUPPORTED', LOG_FILE_UPDATE_REFUSED);
        if (typeof value !== 'string') fail('a file path, or "" for standard error');
        next.file = value as string;
        break;
      case 'log_info':
      case 'log_warning':
      case 'log_error':
        if (typeof value !== 'boolean') fail('true or false');
        next[key === 'log_info' ? 'info' : key === 'log_warning' ? 'warning' : 'error'] = value as boolean;
        break;
      case 'log_verbose_level':
        if (typeof value !== 'number' || !Number.isInteger(value) || value < 0) fail('a non-negative integer');
        next.verboseLevel = value as number;
        break;
      case 'log_format':
        if (value !== 'default' && value !== 'ISO8601') fail('"default" or "ISO8601"');
        next.format = value as 'default' | 'ISO8601';
        break;
      default:
        throw new NereidError('INVALID_ARG', `unknown log setting '${key}'; the settings are ${KEYS.join(', ')}`);
    }
  }
  return toMessage(Object.keys(next).length > 0 ? logger.configure(next) : logger.settings());
}
