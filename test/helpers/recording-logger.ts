import type { Logger } from '../../src/logging/logger.js';

/** Every line the server logs, whatever its severity, as `I component] message` (W, E, V alike). */
export function recordingLogger(): Logger & { readonly lines: string[] } {
  const lines: string[] = [];
  return {
    lines,
    info: (component, message) => lines.push(`I ${component}] ${message}`),
    warning: (component, message) => lines.push(`W ${component}] ${message}`),
    error: (component, message) => lines.push(`E ${component}] ${message}`),
    verbose: (_level, component, message) => lines.push(`V ${component}] ${message}`),
  };
}
