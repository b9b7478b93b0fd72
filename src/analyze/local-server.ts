import { type ChildProcess, spawn } from 'node:child_process';
import { extname } from 'node:path';
import { fileURLToPath } from 'node:url';

/** `nereid` itself: the same entry point and Node flags (tsx under the tests) as this process. */
const MAIN = fileURLToPath(new URL(`../cli/main${extname(fileURLToPath(import.meta.url))}`, import.meta.url));
const START_TIMEOUT_MS = 120_000;
const STOP_TIMEOUT_MS = 15_000;

export interface LocalServer {
  /** `127.0.0.1:port` of its HTTP service. */
  readonly url: string;
  /** Stops it (SIGTERM, then SIGKILL after 15 s) and resolves once it has exited. */
  stop(): Promise<void>;
}

export class LocalServerError extends Error {
  override readonly name = 'LocalServerError';
}

/**
 * Starts `nereid serve` on `modelRepository` as a child process, in explicit model control mode with
 * only `modelName` loaded, HTTP alone on a free port of 127.0.0.1 (no gRPC, metrics or dashboard).
 * NOTE: a child rather than this process, so that the load generator and the server do not share one
 * event loop: the figures are then the ones the model gets when served alone (Model Analyzer's "local"
 * launch mode). The port is read from the server's start-up line.
 */
export async function startLocalServer(modelRepository: string, modelName: string): Promise<LocalServer> {
  const child = spawn(
    process.execPath,
    [
      // An inspector's port is this process's: the child would fail to take it.
      ...process.execArgv.filter((arg) => !arg.startsWith('--inspect')),
      MAIN,
      'serve',
      '--model-repository', modelRepository,
      '--model-control-mode', 'explicit',
      '--load-model', modelName,
      '--http-address', '127.0.0.1',
      '--http-port', '0',
      '--allow-grpc', 'false',
      '--allow-metrics', 'false',
      '--allow-dashboard', 'false',
    ],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  const url = await new Promise<string>((resolve, reject) => {
    let log = '';
    const timer = setTimeout(() => fail(`it did not start within ${START_TIMEOUT_MS / 1000} s`), START_TIMEOUT_MS);
    function fail(why: string): void {
      clearTimeout(timer);
      child.kill('SIGKILL');
      reject(new LocalServerError(`cannot start Nereid on '${modelRepository}': ${why}${log === '' ? '' : `; its log:\n${log.trimEnd().split('\n').slice(-10).join('\n')}`}`));
    }
    child.stderr!.setEncoding('utf8');
    child.stderr!.on('data', (chunk: string) => {
      log += chunk;
      const port = /Started HTTPService at [^\s]+:(\d+)/.exec(log)?.[1];
      if (port !== undefined) {
        clearTimeout(timer);
        child.stderr!.removeAllListeners('data');
        child.stderr!.resume();
        resolve(`127.0.0.1:${port}`);
      }
    });
    child.once('error', (error) => fail(error.message));
    child.once('exit', (code, signal) => fail(`it exited (${signal ?? `code ${code}`})`));
  });
  child.removeAllListeners('exit');
  return { url, stop: () => stopChild(child) };
}

function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), STOP_TIMEOUT_MS);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve();
    });
    child.kill('SIGTERM');
  });
}
