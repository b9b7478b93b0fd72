import { type ConfigurableLogger, type Logger, isConfigurableLogger } from './logger.js';

/** One line as the logger was asked to write it. */
export interface RecentLogLine {
  readonly timeMs: number;
  readonly severity: 'I' | 'W' | 'E';
  readonly component: string;
  readonly message: string;
}

/**
 * The last lines a logger wrote, for the dashboard's "recent log lines" of a model. Info, warning and
 * error lines are kept when the logger writes them; verbose lines never are. NOTE: verbose lines are
 * left out on purpose: `--log-verbose` logs a line per request, and keeping them would put a copy on
 * the inference path of every server, watched or not.
 */
export class RecentLogLines {
  readonly #capacity: number;
  readonly #lines: RecentLogLine[] = [];

  constructor(capacity = 1000) {
    this.#capacity = capacity;
  }

  /** A logger that writes through `inner` and keeps what it wrote; configurable when `inner` is. */
  record(inner: Logger): Logger {
    const isOn = (severity: 'info' | 'warning' | 'error'): boolean => !isConfigurableLogger(inner) || inner.settings()[severity];
    const keep = (severity: RecentLogLine['severity'], component: string, message: string): void => {
      this.#lines.push({ timeMs: Date.now(), severity, component, message });
      if (this.#lines.length > this.#capacity) this.#lines.shift();
    };
    const logger: Logger = {
      info: (component, message) => {
        inner.info(component, message);
        if (isOn('info')) keep('I', component, message);
      },
      warning: (component, message) => {
        inner.warning(component, message);
        if (isOn('warning')) keep('W', component, message);
      },
      error: (component, message) => {
        inner.error(component, message);
        if (isOn('error')) keep('E', component, message);
      },
      verbose: (level, component, message) => inner.verbose(level, component, message),
    };
    if (!isConfigurableLogger(inner)) return logger;
    const configurable: ConfigurableLogger = { ...logger, settings: () => inner.settings(), configure: (changes) => inner.configure(changes) };
    return configurable;
  }

  /** The kept lines that name the model (`'name'`, as Nereid's messages quote it), oldest first; at most `limit`. */
  about(modelName: string, limit: number): RecentLogLine[] {
    const quoted = `'${modelName}'`;
    return this.#lines.filter((line) => line.message.includes(quoted)).slice(-limit);
  }
}
