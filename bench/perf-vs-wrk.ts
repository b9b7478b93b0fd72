/**
 * `nereid perf` beside wrk on one Nereid server: does the tool report the throughput a trusted load
 * generator measures, and what the server itself counted?
 *
 *   npm run bench:perf-vs-wrk            (builds first; or, after `npm run build`:)
 *   node --import tsx bench/perf-vs-wrk.ts
 *
 * Environment (defaults in brackets): BENCH_MODELS [mlp_batch,resnet18_batch], BENCH_CONCURRENCY [1,8,32],
 * BENCH_INTERVAL_MS [5000] (nereid perf's --measurement-interval; wrk runs three of them, the span perf
 * reports), BENCH_WRK [wrk].
 *
 * One server (`node dist/cli/main.js serve`, bench/harness.ts) serves the models of bench/batching (made by
 * bench/batching/make_models.py with Debian's python3-torch on the first run). For each model and
 * concurrency, on the same server run, one after the other: a discarded 2 s wrk warm-up; wrk for three
 * intervals (bench/batching/infer.lua: one keep-alive connection per unit of concurrency, the sample
 * as binary data, batch 1); `nereid perf` as its own process (`-u` HTTP, `--concurrency-range C`,
 * `-p BENCH_INTERVAL_MS`, stability 10 %, the same sample bytes through `--input-data`); wrk again, so
 * that drift of a shared machine during the perf run shows. Around each wrk run the server's
 * statistics extension is read, so its figure can be set against the requests the server counted;
 * nereid perf's windows carry that check themselves. Results: a markdown table on stdout, JSON in
 * bench/results/.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { HttpClient } from '../src/client/index.js';
import { encodeInferRequest } from './batching/kserve-binary.js';
import { runWrk } from './batching/wrk.js';
import { startNereid } from './harness.js';
import { runNereidPerf, writeInputData } from './nereid-perf.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const WORK = `${ROOT}bench/batching/.work`;
const env = process.env;
const MODELS = (env.BENCH_MODELS ?? 'mlp_batch,resnet18_batch').split(',');
const CONCURRENCY = (env.BENCH_CONCURRENCY ?? '1,8,32').split(',').map(Number);
const INTERVAL_MS = Number(env.BENCH_INTERVAL_MS ?? 5000);
const SAMPLES: Record<string, { sample: string; dims: number[] }> = {
  mlp_batch: { sample: 'mlp', dims: [64] },
  resnet18_batch: { sample: 'resnet18', dims: [3, 224, 224] },
};

interface WrkFigures {
  readonly inferPerSec: number;
  /** The server's statistics success count over the run, per second of wrk's duration. */
  readonly serverPerSec: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
}

interface Row {
  readonly model: string;
  readonly concurrency: number;
  /** wrk just before and just after nereid perf: how far the machine drifted meanwhile. */
  readonly wrkBefore: WrkFigures;
  readonly wrkAfter: WrkFigures;
  readonly perf: {
    readonly inferPerSec: number;
    readonly isStable: boolean;
    readonly windows: number;
    readonly p50Ms: number;
    readonly p99Ms: number;
    readonly requests: number;
    /** The server's success count over the same windows: equal to `requests` by construction. */
    readonly serverCount: number;
  };
}

const successCount = async (client: HttpClient, model: string): Promise<number> =>
  (await client.modelStatistics(model)).reduce((total, stats) => total + stats.inferenceStats.success.count, 0);

if (!existsSync(`${WORK}/model_repository/resnet18_batch`)) {
  spawnSync('/usr/bin/python3', [`${ROOT}bench/batching/make_models.py`], { stdio: 'inherit' });
}
mkdirSync(`${WORK}/bodies`, { recursive: true });
const nereid = await startNereid(`${WORK}/model_repository`);
const url = `127.0.0.1:${nereid.httpPort}`;
const client = new HttpClient(url);
const rows: Row[] = [];
try {
  for (const model of MODELS) {
    const { sample, dims } = SAMPLES[model]!;
    const bytes = readFileSync(`${WORK}/samples/${sample}.input.bin`);
    const message = encodeInferRequest([{ name: 'INPUT', datatype: 'FP32', shape: [1, ...dims], bytes }]);
    const bodyFile = `${WORK}/bodies/perf-vs-wrk-${model}.bin`;
    writeFileSync(bodyFile, message.body);
    const dataFile = writeInputData(`${WORK}/bodies/perf-vs-wrk-${model}.json`, 'INPUT', bytes);
    const wrkOptions = { url: `http://${url}/v2/models/${model}/infer`, threads: 1, bodyFile, headerLength: message.headerLength, ...(env.BENCH_WRK !== undefined ? { wrk: env.BENCH_WRK } : {}) };
    const measureWrk = async (concurrency: number): Promise<WrkFigures> => {
      const before = await successCount(client, model);
      const wrk = await runWrk({ ...wrkOptions, concurrency, durationS: (3 * INTERVAL_MS) / 1000 });
      if (wrk.errorCount > 0) throw new Error(`wrk saw ${wrk.errorCount} errors: ${JSON.stringify(wrk.errors)}`);
      const serverCount = (await successCount(client, model)) - before;
      return { inferPerSec: wrk.inferPerSec, serverPerSec: serverCount / wrk.durationS, p50Ms: wrk.p50Ms, p99Ms: wrk.p99Ms };
    };
    for (const concurrency of CONCURRENCY) {
      await runWrk({ ...wrkOptions, concurrency, durationS: 2 });
      const wrkBefore = await measureWrk(concurrency);
      const report = await runNereidPerf(['-m', model, '-u', url, '--concurrency-range', String(concurrency), '-p', String(INTERVAL_MS), '--input-data', dataFile]);
      const wrkAfter = await measureWrk(concurrency);
      const step = report.steps[0]!;
      const row: Row = {
        model,
        concurrency,
        wrkBefore,
        wrkAfter,
        perf: {
          inferPerSec: step.throughputInferPerSec,
          isStable: step.isStable,
          windows: step.windows.length,
          p50Ms: step.latencyUs.p50Us / 1000,
          p99Ms: step.latencyUs.p99Us / 1000,
          requests: step.requestCount,
          serverCount: step.server.successCount,
        },
      };
      rows.push(row);
      console.error(JSON.stringify(row));
    }
  }
} finally {
  await client.close();
  nereid.stop();
}

const wrkCell = (figures: WrkFigures): string => `${figures.inferPerSec.toFixed(1)} (${figures.serverPerSec.toFixed(1)})`;
const table = [
  `wrk: ${(3 * INTERVAL_MS) / 1000} s runs just before and just after nereid perf (in brackets: the server's own count per second); ` +
    `nereid perf: windows of ${INTERVAL_MS / 1000} s until three agree within 10 %, its figures those three. One server run, HTTP binary data, batch 1.`,
  '',
  '| model | c | wrk before | nereid perf | wrk after | perf / wrk mean | wrk p50 / p99 ms | perf p50 / p99 ms | perf windows | perf requests = server count |',
  '|---|---:|---:|---:|---:|---:|---:|---:|---:|---|',
  ...rows.map((row) => {
    const wrkMean = (row.wrkBefore.inferPerSec + row.wrkAfter.inferPerSec) / 2;
    return (
      `| ${row.model} | ${row.concurrency} | ${wrkCell(row.wrkBefore)} | ${row.perf.inferPerSec.toFixed(1)} | ${wrkCell(row.wrkAfter)} | ${(row.perf.inferPerSec / wrkMean).toFixed(3)} | ` +
      `${row.wrkBefore.p50Ms.toFixed(2)} / ${row.wrkBefore.p99Ms.toFixed(2)} | ${row.perf.p50Ms.toFixed(2)} / ${row.perf.p99Ms.toFixed(2)} | ` +
      `${row.perf.windows}${row.perf.isStable ? '' : ' (unstable)'} | ${row.perf.requests === row.perf.serverCount ? 'yes' : 'NO'} (${row.perf.requests}) |`
    );
  }),
].join('\n');
console.log(table);
mkdirSync(`${ROOT}bench/results`, { recursive: true });
const stamp = new Date().toISOString().replace(/[:.]/g, '-');
writeFileSync(`${ROOT}bench/results/perf-vs-wrk-${stamp}.json`, `${JSON.stringify({ intervalMs: INTERVAL_MS, rows }, null, 2)}\n`);
writeFileSync(`${ROOT}bench/results/perf-vs-wrk-${stamp}.md`, `${table}\n`);
process.exit(0);
