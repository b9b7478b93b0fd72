/**
 * What tracing costs (issue 23): the throughput of the digits MLP (examples/model_repository/digits,
 * 64 → 32 → 10, dynamic batching) over HTTP with the binary data extension, `wrk` at a fixed
 * concurrency, with tracing OFF, then TIMESTAMPS at rate 1000 and at rate 1 (every request traced)
 * in Triton mode (the traces written to a file at shutdown) and in OpenTelemetry mode (spans exported
 * over OTLP/HTTP to a sink in this process that counts what it receives). The servers are measured in
 * turn, round after round. Besides wrk's figures, the server's own CPU time per request (utime + stime
 * from /proc/<pid>/stat over the wrk run), which the machine's noise hurts less.
 *
 *   node --import tsx bench/trace.ts
 *
 * Environment (defaults in brackets): BENCH_SECONDS [5] seconds of wrk per point and round,
 * BENCH_ROUNDS [2], BENCH_CONCURRENCY [8].
 */
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { encodeInferRequest } from './batching/kserve-binary.js';
import { freePort, startServer, stopAllOnExit } from './batching/servers.js';
import { type WrkResult, runWrk } from './batching/wrk.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const seconds = Number(process.env.BENCH_SECONDS ?? 5);
const rounds = Number(process.env.BENCH_ROUNDS ?? 2);
const concurrency = Number(process.env.BENCH_CONCURRENCY ?? 8);

const work = mkdtempSync(join(tmpdir(), 'nereid-bench-trace-'));
const pixels = new Float32Array(64).map((_, i) => i % 17);
const { body, headerLength } = encodeInferRequest([{ name: 'INPUT', datatype: 'FP32', shape: [1, 64], bytes: new Uint8Array(pixels.buffer) }]);
const bodyFile = join(work, 'body.bin');
writeFileSync(bodyFile, body);

// The OTLP/HTTP receiver the OpenTelemetry setups export to: it answers 200 and counts the bytes.
let otlpBytes = 0;
const sink = createServer((req, res) => {
  req.on('data', (chunk: Buffer) => (otlpBytes += chunk.length));
  req.on('end', () => res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end());
});
await new Promise<void>((resolve) => sink.listen(0, '127.0.0.1', resolve));
const otlpUrl = `http://127.0.0.1:${(sink.address() as AddressInfo).port}/v1/traces`;
const openTelemetry = ['--trace-config', 'mode=opentelemetry', '--trace-config', `opentelemetry,url=${otlpUrl}`];

const SETUPS = [
  { label: 'tracing off', args: [] as string[], isTriton: false },
  { label: 'triton, TIMESTAMPS, rate 1000', args: ['--trace-config', 'level=TIMESTAMPS', '--trace-config', 'rate=1000'], isTriton: true },
  { label: 'triton, TIMESTAMPS, rate 1', args: ['--trace-config', 'level=TIMESTAMPS', '--trace-config', 'rate=1'], isTriton: true },
  { label: 'opentelemetry, TIMESTAMPS, rate 1000', args: [...openTelemetry, '--trace-config', 'level=TIMESTAMPS', '--trace-config', 'rate=1000'], isTriton: false },
  { label: 'opentelemetry, TIMESTAMPS, rate 1', args: [...openTelemetry, '--trace-config', 'level=TIMESTAMPS', '--trace-config', 'rate=1'], isTriton: false },
];

/** The process's CPU time so far, in µs (utime + stime, fields 14 and 15 of /proc/<pid>/stat, in clock ticks of 10 ms). */
const cpuUsOf = (pid: number): number => {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10_000;
};

stopAllOnExit();
const results = new Map<string, WrkResult[]>(SETUPS.map((setup) => [setup.label, []]));
const cpuUsPerRequest = new Map<string, number[]>(SETUPS.map((setup) => [setup.label, []]));
const traceBytes = new Map<string, number>();
for (let round = 0; round < rounds; round++) {
  for (const [index, setup] of SETUPS.entries()) {
    const port = await freePort();
    const file = join(work, `trace-${index}-${round}.json`);
    const server = await startServer({
      label: setup.label,
      command: process.execPath,
      args: [
        '--import',
        'tsx',
        join(ROOT, 'src/cli/main.ts'),
        'serve',
        '--model-repository',
        join(ROOT, 'examples/model_repository'),
        '--model-control-mode=explicit',
        '--load-model=digits',
        '--http-address=127.0.0.1',
        `--http-port=${port}`,
        '--allow-grpc=false',
        '--allow-metrics=false',
        ...setup.args,
        ...(setup.isTriton ? ['--trace-config', `triton,file=${file}`] : []),
      ],
      port,
      logFile: join(work, `server-${index}.log`),
    });
    const otlpBefore = otlpBytes;
    try {
      const cpuBefore = cpuUsOf(server.pid);
      const result = await runWrk({ url: `${server.baseUrl}/v2/models/digits/infer`, concurrency, threads: 1, durationS: seconds, bodyFile, headerLength });
      cpuUsPerRequest.get(setup.label)!.push((cpuUsOf(server.pid) - cpuBefore) / result.requests);
      if (result.errorCount > 0) throw new Error(`${setup.label}: ${result.errorCount} errors ${JSON.stringify(result.errors)}`);
      results.get(setup.label)!.push(result);
    } finally {
      await server.stop();
    }
    if (setup.isTriton) traceBytes.set(setup.label, (traceBytes.get(setup.label) ?? 0) + (statSync(file, { throwIfNoEntry: false })?.size ?? 0));
    else if (setup.args.length > 0) traceBytes.set(setup.label, (traceBytes.get(setup.label) ?? 0) + otlpBytes - otlpBefore);
  }
}

const mean = (values: number[]): number => values.reduce((sum, value) => sum + value, 0) / values.length;
const median = (values: number[]): number => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
const off = mean(results.get(SETUPS[0]!.label)!.map((result) => result.inferPerSec));
console.log(`digits MLP over HTTP (binary), wrk -c${concurrency}, ${rounds} round(s) of ${seconds} s each`);
console.log('| tracing | infer/s (mean) | vs off | server CPU µs/request (median) | p50 ms (median) | p99 ms (median) | trace file or OTLP export (all rounds) |');
console.log('|---|---|---|---|---|---|---|');
for (const setup of SETUPS) {
  const runs = results.get(setup.label)!;
  const rate = mean(runs.map((result) => result.inferPerSec));
  const bytes = traceBytes.get(setup.label);
  console.log(
    `| ${setup.label} | ${rate.toFixed(0)} | ${((rate / off) * 100).toFixed(0)} % | ${median(cpuUsPerRequest.get(setup.label)!).toFixed(0)} | ${median(runs.map((r) => r.p50Ms)).toFixed(2)} | ${median(runs.map((r) => r.p99Ms)).toFixed(2)} | ${bytes === undefined ? '—' : `${(bytes / 2 ** 20).toFixed(1)} MiB`} |`,
  );
}
sink.close();
rmSync(work, { recursive: true, force: true });
