/**
 * What an ONNX Runtime instance costs in resident memory (issue 19, item 1): Nereid serving N copies
 * of the MLP (64 → 256 → 256 → 10, bench/batching's, 340 KB), one instance each, RSS of the server
 * (VmRSS of /proc/PID/status) once every model is ready, and the time until then.
 *
 *   node --import tsx bench/instance-memory.ts        (after `npm run build` and `bench:hot-path`, which exports the MLP)
 *
 * Environment (defaults in brackets):
 *   BENCH_COPIES [1,20,60]       BENCH_INTRA_OP [0,1]: intra_op_thread_count per instance (0: Nereid's share of the cores)
 *   BENCH_NEREID_MAIN [dist/cli/main.js]   BENCH_BEFORE_MAIN [unset]: a second build measured alongside
 *   BENCH_WORK_DIR [bench/batching/.work]
 */
import { linkSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { freePort, startServer, stopAllOnExit } from './batching/servers.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const env = process.env;
const copies = (env.BENCH_COPIES ?? '1,20,60').split(',').map(Number);
const intraOps = (env.BENCH_INTRA_OP ?? '0,1').split(',').map(Number);
const work = env.BENCH_WORK_DIR ?? `${ROOT}bench/batching/.work`;
const builds: Array<[string, string]> = [['nereid', env.BENCH_NEREID_MAIN ?? `${ROOT}dist/cli/main.js`]];
if (env.BENCH_BEFORE_MAIN !== undefined) builds.push(['before', env.BENCH_BEFORE_MAIN]);

function writeRepository(count: number, intraOp: number): string {
  const repository = `${work}/memory_repository`;
  rmSync(repository, { recursive: true, force: true });
  for (let index = 0; index < count; index++) {
    const name = `mlp_${index}`;
    mkdirSync(`${repository}/${name}/1`, { recursive: true });
    linkSync(`${work}/onnx/mlp.onnx`, `${repository}/${name}/1/model.onnx`);
    const lines = [
      `name: "${name}"`,
      'platform: "onnxruntime_onnx"',
      'max_batch_size: 64',
      'input [ { name: "INPUT" data_type: TYPE_FP32 dims: [ 64 ] } ]',
      'output [ { name: "OUTPUT" data_type: TYPE_FP32 dims: [ 10 ] } ]',
      'instance_group [ { count: 1 kind: KIND_CPU } ]',
    ];
    if (intraOp > 0) lines.push(`parameters { key: "intra_op_thread_count" value: { string_value: "${intraOp}" } }`);
    writeFileSync(`${repository}/${name}/config.pbtxt`, `${lines.join('\n')}\n`);
  }
  return repository;
}

function rssMb(pid: number): number {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8').split('\n').find((l) => l.startsWith('VmRSS:'))!;
  return Number(line.split(/\s+/)[1]) / 1024;
}

function threadCount(pid: number): number {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8').split('\n').find((l) => l.startsWith('Threads:'))!;
  return Number(line.split(/\s+/)[1]);
}

async function main(): Promise<void> {
  stopAllOnExit();
  mkdirSync(`${work}/logs`, { recursive: true });
  const rows = ['| build | intra-op threads | models (1 instance each) | RSS MB | OS threads | ready after s |', '|---|---|---|---|---|---|'];
  for (const intraOp of intraOps) {
    for (const count of copies) {
      const repository = writeRepository(count, intraOp);
      for (const [label, main] of builds) {
        const port = await freePort();
        const startedMs = performance.now();
        const server = await startServer({
          label,
          command: process.execPath,
          args: [main, 'serve', '--model-repository', repository, '--http-port', String(port), '--http-address', '127.0.0.1', '--grpc-port', '0', '--metrics-port', '0', '--exit-on-error', 'true'],
          port,
          logFile: `${work}/logs/memory-${label}.log`,
        });
        const readyS = (performance.now() - startedMs) / 1000;
        await new Promise((resolve) => setTimeout(resolve, 1000));
        const rss = rssMb(server.pid);
        const threads = threadCount(server.pid);
        await server.stop();
        rows.push(`| ${label} | ${intraOp === 0 ? 'share of cores' : intraOp} | ${count} | ${rss.toFixed(0)} | ${threads} | ${readyS.toFixed(1)} |`);
        process.stderr.write(`${rows.at(-1)}\n`);
      }
    }
  }
  process.stdout.write(`${rows.join('\n')}\n`);
}

await main();
