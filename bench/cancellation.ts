/**
 * Request cancellation under overload (issue 21): CLIENTS closed loops, each giving up on its request
 * after TIMEOUT_MS and sending the next at once, against a JavaScript model that takes MODEL_MS per
 * request (one instance, dynamic batching with max_batch_size 1: one request per execution; the model
 * ignores its signal, as most models do). The offered load is far beyond what the model can serve, so
 * without cancellation the queue fills with requests nobody waits for any more.
 *
 *   in-process, no signal   core.infer(request): the caller stops waiting; the request stays queued
 *   in-process, signal      core.infer({ ...request, signal: AbortSignal.timeout(TIMEOUT_MS) })
 *   HTTP, connection kept   fetch, the client stops waiting but leaves its connection open
 *   HTTP, connection closed fetch with AbortSignal.timeout(TIMEOUT_MS): the connection closes
 *
 * For each: requests sent, requests cancelled (the statistics' failures), executions in the window,
 * answers delivered in time, and their share of the executions. What a run leaves queued is cancelled after its window (not counted). The in-process
 * modes run the server in this process; the HTTP modes a server process of its own (`src/cli/main.ts
 * serve` under tsx), so that the clients' work does not slow the server.
 *
 *   node --import tsx bench/cancellation.ts      (npm run bench:cancellation)
 *
 * Environment (defaults in brackets): BENCH_SECONDS [5] per run, BENCH_ROUNDS [2] (the modes alternate
 * within each round), CLIENTS [128], TIMEOUT_MS [50], MODEL_MS [20].
 */
import { setMaxListeners } from 'node:events';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { type RunningServer, startServer } from '../src/server.js';
import { silentLogger } from '../src/logging/logger.js';
import type { InferRequest } from '../src/core/index.js';
import { type ServerProcess, freePort, startServer as startServerProcess, stopAllOnExit } from './batching/servers.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 2);
const CLIENTS = Number(process.env.CLIENTS ?? 128);
const TIMEOUT_MS = Number(process.env.TIMEOUT_MS ?? 50);
const MODEL_MS = Number(process.env.MODEL_MS ?? 20);

const MODES = ['in-process, no signal', 'in-process, signal', 'HTTP, connection kept', 'HTTP, connection closed'] as const;
type Mode = (typeof MODES)[number];

function writeRepository(): string {
  const repository = mkdtempSync(join(tmpdir(), 'nereid-cancel-bench-'));
  mkdirSync(join(repository, 'sleepy', '1'), { recursive: true });
  writeFileSync(
    join(repository, 'sleepy', 'config.pbtxt'),
    `backend: "javascript"
max_batch_size: 1
input [ { name: "X" data_type: TYPE_FP32 dims: [ 1 ] } ]
output [ { name: "Y" data_type: TYPE_FP32 dims: [ 1 ] } ]
dynamic_batching { max_queue_delay_microseconds: 0 }
instance_group [ { count: 1 kind: KIND_CPU } ]
`,
  );
  writeFileSync(
    join(repository, 'sleepy', '1', 'model.js'),
    `export default class Sleepy {
  async execute(requests) {
    await new Promise((resolve) => setTimeout(resolve, ${MODEL_MS}));
    return requests.map((request) => ({ outputs: [{ name: 'Y', datatype: 'FP32', shape: [1, 1], data: request.input('X').data }] }));
  }
}
`,
  );
  return repository;
}

const BODY = JSON.stringify({ inputs: [{ name: 'X', datatype: 'FP32', shape: [1, 1], data: [1] }] });
const request = (signal: AbortSignal): InferRequest => ({
  modelName: 'sleepy',
  id: '',
  parameters: {},
  inputs: [{ name: 'X', dataType: 'FP32', shape: [1, 1], data: new Float32Array([1]) }],
  signal,
});

/** The server in this process (in-process modes) and the server process (HTTP modes). */
interface Servers {
  readonly inProcess: RunningServer;
  readonly process: ServerProcess;
}

/** One request as the mode sends it; `leftover` cancels, after the window, what the client gave up on. */
function send(servers: Servers, mode: Mode, leftover: AbortSignal): Promise<unknown> {
  const timeout = (): AbortSignal => AbortSignal.any([AbortSignal.timeout(TIMEOUT_MS), leftover]);
  const url = `${servers.process.baseUrl}/v2/models/sleepy/infer`;
  switch (mode) {
    case 'in-process, no signal':
      return servers.inProcess.core.infer(request(leftover));
    case 'in-process, signal':
      return servers.inProcess.core.infer(request(timeout()));
    case 'HTTP, connection kept':
      return fetch(url, { method: 'POST', body: BODY, signal: leftover }).then((response) => response.arrayBuffer());
    case 'HTTP, connection closed':
      return fetch(url, { method: 'POST', body: BODY, signal: timeout() }).then((response) => response.arrayBuffer());
  }
}

/** The model's executions, and its failed requests (here: those cancelled, most before they ran). */
async function counts(servers: Servers, mode: Mode): Promise<{ readonly executions: number; readonly failed: number }> {
  if (mode.startsWith('in-process')) {
    const stats = servers.inProcess.core.modelStatistics('sleepy')[0]!;
    return { executions: stats.executionCount, failed: stats.inferenceStats.fail.count };
  }
  const json = (await (await fetch(`${servers.process.baseUrl}/v2/models/sleepy/stats`)).json()) as {
    model_stats: Array<{ execution_count: number; inference_stats: { fail: { count: number } } }>;
  };
  return { executions: json.model_stats[0]!.execution_count, failed: json.model_stats[0]!.inference_stats.fail.count };
}

/** Once the requests a run left behind are cancelled, a request sent last is answered: the queue is empty again. */
async function drain(servers: Servers, mode: Mode): Promise<void> {
  if (mode.startsWith('in-process')) {
    while (servers.inProcess.core.inflightCount > 0) await sleep(20);
    return;
  }
  await (await fetch(`${servers.process.baseUrl}/v2/models/sleepy/infer`, { method: 'POST', body: BODY })).arrayBuffer();
}

interface Result {
  readonly mode: Mode;
  readonly executions: number;
  readonly delivered: number;
  readonly sent: number;
  readonly cancelled: number;
}

async function run(servers: Servers, mode: Mode): Promise<Result> {
  const leftover = new AbortController();
  // Every request of the run listens to it.
  setMaxListeners(0, leftover.signal);
  const start = await counts(servers, mode);
  const deadline = performance.now() + SECONDS * 1000;
  let delivered = 0;
  let sent = 0;
  const client = async (): Promise<void> => {
    while (performance.now() < deadline) {
      sent++;
      const answer = send(servers, mode, leftover.signal).then(
        () => 'answer' as const,
        () => 'failed' as const,
      );
      const outcome = await Promise.race([answer, sleep(TIMEOUT_MS, 'late' as const)]);
      if (outcome === 'answer' && performance.now() <= deadline) delivered++;
      // A failure (cancelled in time) is answered at once: wait out the timeout as a client would.
      if (outcome === 'failed') await sleep(1);
    }
  };
  await Promise.all(Array.from({ length: CLIENTS }, client));
  const end = await counts(servers, mode);
  leftover.abort();
  await drain(servers, mode);
  return { mode, executions: end.executions - start.executions, delivered, sent, cancelled: end.failed - start.failed };
}

stopAllOnExit();
const repository = writeRepository();
const port = await freePort();
const servers: Servers = {
  inProcess: await startServer({ modelRepositories: [repository], httpPort: 0, httpAddress: '127.0.0.1', isGrpcAllowed: false, isMetricsAllowed: false, logger: silentLogger }),
  process: await startServerProcess({
    label: 'nereid',
    command: process.execPath,
    args: ['--import', 'tsx', join(ROOT, 'src/cli/main.ts'), 'serve', `--model-repository=${repository}`, `--http-port=${port}`, '--http-address=127.0.0.1', '--allow-grpc=false', '--allow-metrics=false'],
    port,
    logFile: join(repository, 'server.log'),
  }),
};
try {
  console.log(`${CLIENTS} clients, ${TIMEOUT_MS} ms timeout, model ${MODEL_MS} ms, ${SECONDS} s per run, ${ROUNDS} round(s)`);
  console.log('| mode | round | requests sent | cancelled (failed CANCELLED) | executions | answers delivered in time | delivered / executions |');
  console.log('|---|---|---|---|---|---|---|');
  for (let round = 1; round <= ROUNDS; round++) {
    for (const mode of MODES) {
      const result = await run(servers, mode);
      const share = result.executions === 0 ? 0 : result.delivered / result.executions;
      console.log(`| ${mode} | ${round} | ${result.sent} | ${result.cancelled} | ${result.executions} | ${result.delivered} | ${(share * 100).toFixed(1)} % |`);
    }
  }
} finally {
  await servers.process.stop();
  await servers.inProcess.shutdown();
  rmSync(repository, { recursive: true, force: true });
}
