import { parseServeArgs, serveUsage } from '../config/server-options.js';
import { startServer } from '../server.js';

/**
 * `nereid serve`: starts the server and stops it gracefully on SIGINT or SIGTERM (a second signal
 * exits at once). With TLS on, SIGHUP reloads the certificate files (without TLS it keeps its default
 * action, ending the process). Resolves with the process exit code.
 */
export async function serve(args: readonly string[]): Promise<number> {
  const options = parseServeArgs(args);
  if (options === 'help') {
    process.stdout.write(serveUsage());
    return 0;
  }
  const server = await startServer(options);
  return new Promise<number>((resolve) => {
    let signals = 0;
    const onSignal = (signal: NodeJS.Signals): void => {
      signals++;
      if (signals > 1) {
        server.logger.warning('server', `${signal} again: exiting without waiting`);
        process.exit(1);
      }
      server.logger.info('server', `${signal} received: stopping (in-flight requests get up to ${options.exitTimeoutMs / 1000} s)`);
      server.shutdown().then(
        () => resolve(0),
        (error: Error) => {
          server.logger.error('server', `shutdown failed: ${error.stack ?? error.message}`);
          resolve(1);
        },
      );
    };
    process.on('SIGINT', onSignal);
    process.on('SIGTERM', onSignal);
    if (server.hasTls) {
      process.on('SIGHUP', () => {
        server.logger.info('server', 'SIGHUP received: reloading the TLS certificates');
        void server.reloadCertificates();
      });
    }
  });
}
