/**
 * Runs wrk (the external load generator, Debian's `wrk` package) with infer.lua and reads the
 * `BENCH_JSON` line its done() prints. One wrk request is one inference request of batch 1.
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const SCRIPT = fileURLToPath(new URL('infer.lua', import.meta.url));

export interface WrkOptions {
  readonly url: string;
  readonly concurrency: number;
  /** wrk threads; never more than the connections. */
  readonly threads: number;
  /** Whole seconds: wrk takes no fractions. */
  readonly durationS: number;
  readonly bodyFile: string;
  readonly headerLength: number;
  readonly wrk?: string;
}

export interface WrkResult {
  readonly concurrency: number;
  readonly requests: number;
  readonly durationS: number;
  readonly inferPerSec: number;
  readonly meanMs: number;
  readonly p50Ms: number;
  readonly p90Ms: number;
  readonly p99Ms: number;
  readonly maxMs: number;
  /** connect, read, write, timeout errors and non-2xx answers, added up. */
  readonly errorCount: number;
  readonly errors: Readonly<Record<'connect' | 'read' | 'write' | 'status' | 'timeout', number>>;
}

interface WrkJson {
  requests: number;
  duration_us: number;
  mean_us: number;
  p50_us: number;
  p90_us: number;
  p99_us: number;
  max_us: number;
  errors: WrkResult['errors'];
}

/** Runs wrk once; rejects when wrk fails, prints no result or runs 60 s past its duration. */
export function runWrk(options: WrkOptions): Promise<WrkResult> {
  const args = [
    `-t${Math.max(1, Math.min(options.threads, options.concurrency))}`,
    `-c${options.concurrency}`,
    `-d${Math.max(1, Math.round(options.durationS))}s`,
    // NOTE: wrk's default timeout is 2 s; a slow server at concurrency 64 (PyTorch on the CNN) answers
    // later than that, and wrk would count its answers as timeouts instead of latencies.
    '--timeout',
    '120s',
    '-s',
    SCRIPT,
    options.url,
  ];
  return new Promise((resolve, reject) => {
    const child = spawn(options.wrk ?? 'wrk', args, {
      env: { ...process.env, BENCH_BODY_FILE: options.bodyFile, BENCH_HEADER_LENGTH: String(options.headerLength) },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), (options.durationS + 60) * 1000);
    child.once('error', (error) => {
      clearTimeout(timer);
      reject(new Error(`cannot run wrk (${error.message}); install it: apt-get install -y wrk`));
    });
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      const line = stdout.split('\n').find((l) => l.startsWith('BENCH_JSON '));
      if (code !== 0 || line === undefined) {
        reject(new Error(`wrk ${args.join(' ')} exited with ${code ?? signal} and no result:\n${stdout}${stderr}`));
        return;
      }
      const json = JSON.parse(line.slice('BENCH_JSON '.length)) as WrkJson;
      const durationS = json.duration_us / 1e6;
      resolve({
        concurrency: options.concurrency,
        requests: json.requests,
        durationS,
        inferPerSec: json.requests / durationS,
        meanMs: json.mean_us / 1000,
        p50Ms: json.p50_us / 1000,
        p90Ms: json.p90_us / 1000,
        p99Ms: json.p99_us / 1000,
        maxMs: json.max_us / 1000,
        errorCount: Object.values(json.errors).reduce((a, b) => a + b, 0),
        errors: json.errors,
      });
    });
  });
}
