import type { Logger } from '../../logging/logger.js';

/** What the AWS SDK's warning about Node versions starts with (`@aws-sdk/core` emitWarningIfUnsupportedVersion). */
const NODE_VERSION_SUPPORT_WARNING = 'NodeVersionSupportWarning';

/**
 * Runs `build` (an SDK client's constructor) with the AWS SDK's Node version notice sent to `logger`
 * at info, on one line, instead of Node's unformatted multi-line warning on stderr; any other warning
 * passes through as before.
 * NOTE: the SDK emits the notice with process.emitWarning, synchronously, the first time a client is
 * built in the process, and Node prints every emitted warning whatever listens; replacing
 * process.emitWarning for the synchronous constructor only is the one way to catch it without
 * hiding other warnings. A user who wants it gone sets the SDK's own
 * AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED=true.
 */
export function withSdkWarningsLogged<T>(build: () => T, logger: Logger): T {
  const emitWarning = process.emitWarning;
  process.emitWarning = ((warning: string | Error, ...rest: unknown[]): void => {
    const text = typeof warning === 'string' ? warning : warning.message;
    if (text.startsWith(NODE_VERSION_SUPPORT_WARNING)) {
      logger.info('repository', `AWS SDK: ${text.replace(/\s+/g, ' ').trim()}`);
      return;
    }
    (emitWarning as (warning: string | Error, ...rest: unknown[]) => void).call(process, warning, ...rest);
  }) as typeof process.emitWarning;
  try {
    return build();
  } finally {
    process.emitWarning = emitWarning;
  }
}
