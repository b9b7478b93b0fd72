/**
 * Starting, checking and stopping the servers the batching benchmark measures: each is a child
 * process on 127.0.0.1, its output in a log file, ready when GET /v2/health/ready answers 200.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { closeSync, openSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { decodeInferMessage, toFloat32 } from './kserve-binary.js';

export interface ServerProcess {
  readonly label: string;
  readonly baseUrl: string;
  readonly logFile: string;
  readonly pid: number | undefined;
  /** SIGTERM, then SIGKILL after 15 s; resolves once the process has exited. */
  stop(): Promise<void>;
}

export interface StartOptions {
  readonly label: string;
  readonly command: string;
  readonly args: readonly string[];
  readonly port: number;
  readonly logFile: string;
  readonly readyTimeoutMs?: number;
  readonly env?: NodeJS.ProcessEnv;
}

const running = new Set<ChildProcess>();

/** Kills every server still running when the runner exits, also on Ctrl-C. */
export function stopAllOnExit(): void {
  process.once('exit', () => {
    for (const child of running) child.kill('SIGKILL');
  });
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => {
      for (const child of running) child.kill('SIGKILL');
      process.exit(130);
    });
  }
}

/** A port free on 127.0.0.1 now (another process could take it before the server binds it). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address !== null ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

function logTail(logFile: string): string {
  try {
    return readFileSync(logFile, 'utf8').split('\n').slice(-30).join('\n');
  } catch {
    return '';
  }
}

export async function startServer(options: StartOptions): Promise<ServerProcess> {
  const log = openSync(options.logFile, 'w');
  const child = spawn(options.command, options.args, { stdio: ['ignore', log, log], env: options.env ?? process.env });
  closeSync(log);
  running.add(child);
  let exit: string | undefined;
  const exited = new Promise<void>((resolve) => {
    child.once('exit', (code, signal) => {
      exit = String(code ?? signal);
      running.delete(child);
      resolve();
    });
    child.once('error', (error) => {
      exit = error.message;
      running.delete(child);
      resolve();
    });
  });
  const baseUrl = `http://127.0.0.1:${options.port}`;
  const stop = async (): Promise<void> => {
    if (exit !== undefined) return;
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
    await exited;
    clearTimeout(timer);
  };
  const deadline = performance.now() + (options.readyTimeoutMs ?? 180_000);
  while (performance.now() < deadline) {
    if (exit !== undefined) {
      throw new Error(`${options.label} exited (${exit}) before it was ready; ${options.logFile} ends:\n${logTail(options.logFile)}`);
    }
    try {
      const response = await fetch(`${baseUrl}/v2/health/ready`, { signal: AbortSignal.timeout(2000) });
      await response.arrayBuffer();
      if (response.status === 200) return { label: options.label, baseUrl, logFile: options.logFile, pid: child.pid, stop };
    } catch {
      // not listening yet
    }
    await sleep(200);
  }
  await stop();
  throw new Error(`${options.label} was not ready within ${(options.readyTimeoutMs ?? 180_000) / 1000} s; ${options.logFile} ends:\n${logTail(options.logFile)}`);
}

/**
 * Sends one request and compares its FP32 output `OUTPUT` with `reference` (PyTorch's answer, saved by
 * make_models.py). Resolves with the largest absolute difference; rejects on an error status, a
 * malformed reply or a difference past 1e-3 + 1e-3 × |reference|.
 */
export async function checkAnswer(url: string, body: Buffer, headerLength: number, reference: Float32Array): Promise<number> {
  const response = await fetch(url, {
    method: 'POST',
    body,
    headers: { 'content-type': 'application/octet-stream', 'inference-header-content-length': String(headerLength) },
    signal: AbortSignal.timeout(60_000),
  });
  const reply = Buffer.from(await response.arrayBuffer());
  if (response.status !== 200) throw new Error(`POST ${url} answered ${response.status}: ${reply.toString('utf8').slice(0, 500)}`);
  const replyHeaderLength = response.headers.get('inference-header-content-length');
  const { tensors } = decodeInferMessage(reply, replyHeaderLength === null ? undefined : Number(replyHeaderLength), 'outputs');
  const output = tensors.find((tensor) => tensor.name === 'OUTPUT');
  if (output === undefined || !('bytes' in output) || output.datatype !== 'FP32') {
    throw new Error(`POST ${url}: expected a binary FP32 output 'OUTPUT', got ${JSON.stringify(tensors.map(({ name, datatype }) => ({ name, datatype })))}`);
  }
  const values = toFloat32(output.bytes);
  if (values.length !== reference.length) throw new Error(`POST ${url}: OUTPUT has ${values.length} values, expected ${reference.length}`);
  let maxDiff = 0;
  values.forEach((value, i) => {
    const diff = Math.abs(value - reference[i]!);
    if (!(diff <= 1e-3 + 1e-3 * Math.abs(reference[i]!))) {
      throw new Error(`POST ${url}: OUTPUT[${i}] is ${value}, PyTorch computed ${reference[i]} for the same input and weights`);
    }
    maxDiff = Math.max(maxDiff, diff);
  });
  return maxDiff;
}
