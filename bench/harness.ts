/** What the benchmark scripts share: a Nereid child process, and a closed-loop load with its figures. */
import { spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

export interface Figures {
  readonly perSecond: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
}

/** Runs `send` from `concurrency` loops for `durationMs` after one second of warm-up (`onStart` runs between the two). */
export async function measure(concurrency: number, durationMs: number, send: () => Promise<void>, onStart?: () => void): Promise<Figures> {
  const warmEnd = performance.now() + 1000;
  await Promise.all(Array.from({ length: concurrency }, async () => { while (performance.now() < warmEnd) await send(); }));
  onStart?.();
  const latencies: number[] = [];
  const end = performance.now() + durationMs;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (performance.now() < end) {
        const start = performance.now();
        await send();
        latencies.push(performance.now() - start);
      }
    }),
  );
  latencies.sort((a, b) => a - b);
  const at = (p: number): number => latencies[Math.min(latencies.length - 1, Math.floor(p * latencies.length))]!;
  return { perSecond: latencies.length / (durationMs / 1000), p50Ms: at(0.5), p99Ms: at(0.99) };
}

/**
 * Starts the built server (`dist/`, or the build whose cli/main.js is `main`) on free ports of
 * 127.0.0.1, with `flags` added, and resolves once both front ends listen.
 */
export async function startNereid(
  repository: string,
  flags: readonly string[] = [],
  main = `${ROOT}dist/cli/main.js`,
): Promise<{ stop: () => void; httpPort: number; grpcPort: number; pid: number }> {
  const child = spawn(
    process.execPath,
    [main, 'serve', '--model-repository', repository, '--http-port=0', '--grpc-port=0', '--metrics-port=0', '--http-address=127.0.0.1', '--grpc-address=127.0.0.1', ...flags],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let log = '';
  const ports = await new Promise<{ httpPort: number; grpcPort: number }>((resolve, reject) => {
    child.stderr!.on('data', (chunk: Buffer) => {
      log += chunk.toString();
      const http = /[Ss]tarted (?:HTTPService|HTTP service) at [^:]+:(\d+)/.exec(log);
      const grpc = /[Ss]tarted GRPCInferenceService at [^:]+:(\d+)/.exec(log);
      if (http !== null && grpc !== null) resolve({ httpPort: Number(http[1]), grpcPort: Number(grpc[1]) });
    });
    child.once('exit', () => reject(new Error(`nereid exited:\n${log}`)));
  });
  return { ...ports, pid: child.pid!, stop: () => child.kill('SIGTERM') };
}

/** CPU ms a process has used so far, its main thread's apart (user + system, /proc/PID/task/TID/stat). */
export function threadCpuMs(pid: number): { readonly mainMs: number; readonly totalMs: number } {
  const ticksToMs = 10; // USER_HZ is 100 on Linux
  let mainMs = 0;
  let totalMs = 0;
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    let stat: string;
    try {
      stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
    } catch {
      continue; // the thread exited meanwhile
    }
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const ms = (Number(fields[11]) + Number(fields[12])) * ticksToMs;
    totalMs += ms;
    if (Number(tid) === pid) mainMs = ms;
  }
  return { mainMs, totalMs };
}

/**
 * Calls `run` one after the other for `durationMs` (after 3 warm-up calls): the wall time and the
 * process's CPU time per call, in microseconds.
 */
export async function timedCalls(run: () => unknown, durationMs: number): Promise<{ readonly wallUs: number; readonly cpuUs: number }> {
  for (let i = 0; i < 3; i++) await run();
  let calls = 0;
  const start = performance.now();
  const cpu = process.cpuUsage();
  while (performance.now() - start < durationMs) {
    await run();
    calls++;
  }
  const used = process.cpuUsage(cpu);
  return { wallUs: ((performance.now() - start) / calls) * 1000, cpuUs: (used.user + used.system) / calls };
}
