/**
 * gRPC beside HTTP for the same models and concurrencies, measured in one run against one Nereid
 * server: ResNet-18 and the MLP of bench/batching (behind the dynamic batcher), concurrency 1, 8, 32
 * and 64, throughput and p50/p99, and the gRPC / HTTP ratios.
 *
 *   npm run build && node --import tsx bench/grpc-vs-http.ts        (BENCH_INTERVAL_MS, default 3000)
 *
 * Each point is one `nereid perf` run in its own process (`-i http` or `-i grpc`, `--concurrency-range C`,
 * measurement windows of BENCH_INTERVAL_MS until three agree within 10 %), sending what Triton's
 * clients send: HTTP with the binary data extension over keep-alive connections (one per unit of
 * concurrency), gRPC ModelInfer with raw_input_contents over one HTTP/2 connection with a 16 MiB
 * flow-control window. The model files come from bench/batching/make_models.py (Debian's
 * python3-torch), made on the first run.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { StepResult } from '../src/perf/profiler.js';
import { startNereid } from './harness.js';
import { runNereidPerf, writeInputData } from './nereid-perf.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const WORK = `${ROOT}bench/batching/.work`;
const INTERVAL_MS = Number(process.env.BENCH_INTERVAL_MS ?? 3000);
const CONCURRENCY = [1, 8, 32, 64];
const MODELS = [
  { name: 'mlp_batch', input: 'INPUT', sample: 'mlp' },
  { name: 'resnet18_batch', input: 'INPUT', sample: 'resnet18' },
];

const figures = (step: StepResult): string =>
  `${step.throughputInferPerSec.toFixed(0)} | ${(step.latencyUs.p50Us / 1000).toFixed(2)} / ${(step.latencyUs.p99Us / 1000).toFixed(2)}`;

if (!existsSync(`${WORK}/model_repository/resnet18_batch`)) {
  spawnSync('/usr/bin/python3', [`${ROOT}bench/batching/make_models.py`], { stdio: 'inherit' });
}
mkdirSync(`${WORK}/bodies`, { recursive: true });
const nereid = await startNereid(`${WORK}/model_repository`);
const rows: string[] = [];
try {
  for (const model of MODELS) {
    const dataFile = writeInputData(`${WORK}/bodies/grpc-vs-http-${model.name}.json`, model.input, readFileSync(`${WORK}/samples/${model.sample}.input.bin`));
    for (const concurrency of CONCURRENCY) {
      const measure = async (protocol: 'http' | 'grpc', port: number): Promise<StepResult> => {
        const args = ['-m', model.name, '-i', protocol, '-u', `127.0.0.1:${port}`, '--concurrency-range', String(concurrency), '-p', String(INTERVAL_MS), '--input-data', dataFile];
        return (await runNereidPerf(args)).steps[0]!;
      };
      const http = await measure('http', nereid.httpPort);
      const grpc = await measure('grpc', nereid.grpcPort);
      const row = `| ${model.name} | ${concurrency} | ${figures(http)} | ${figures(grpc)} | ${(grpc.throughputInferPerSec / http.throughputInferPerSec).toFixed(2)} |`;
      rows.push(row);
      console.error(row);
    }
  }
} finally {
  nereid.stop();
}
console.log(`nereid perf, windows of ${INTERVAL_MS / 1000} s until three agree within 10 %\n`);
console.log('| model | concurrency | HTTP infer/s | HTTP p50 / p99 ms | gRPC infer/s | gRPC p50 / p99 ms | gRPC / HTTP |');
console.log('|---|---:|---:|---:|---:|---:|---:|');
for (const row of rows) console.log(row);
process.exit(0);
