/**
 * The sequence batcher under 64 concurrent sequences of 32 requests each, three ways against one
 * Nereid server, in one run: the accumulator with the `direct` strategy (one slot per sequence), with
 * the `oldest` strategy (dynamic batches of the oldest requests of up to 64 candidate sequences), and
 * the same ONNX graph without sequence batching, where the client sends START, READY and the running
 * sum itself and the dynamic batcher batches the requests: the same requests, the state kept by the
 * client instead of the server. Throughput (requests/s) and p50/p99 latency; every answer is checked
 * against its sequence's running sum.
 *
 *   npm run build && npm run bench:sequence        (BENCH_DURATION_S, default 5)
 *
 * Each sequence runs its requests one after the other (a request waits for the previous answer, as a
 * client of a stateful model must); when it ends, a new sequence with a new id takes its place.
 * Requests go over keep-alive HTTP with binary tensors, from this process.
 */
import { cp, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { HttpClient } from '../src/client/index.js';
import { startNereid } from './harness.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const DURATION_MS = Number(process.env.BENCH_DURATION_S ?? 5) * 1000;
const SEQUENCES = 64;
const LENGTH = 32;

const CONTROLS = `control_input [
    { name: "START" control [ { kind: CONTROL_SEQUENCE_START int32_false_true: [ 0, 1 ] } ] },
    { name: "READY" control [ { kind: CONTROL_SEQUENCE_READY int32_false_true: [ 0, 1 ] } ] }
  ]
  state [ { input_name: "ACC_IN" output_name: "ACC_OUT" data_type: TYPE_INT32 dims: [ 1 ] } ]`;

const io = (extraInputs: string): string => `platform: "onnxruntime_onnx"
max_batch_size: 64
input [ { name: "INPUT" data_type: TYPE_INT32 dims: [ 1 ] }${extraInputs} ]
output [ { name: "OUTPUT" data_type: TYPE_INT32 dims: [ 1 ] } ]
instance_group [ { kind: KIND_CPU count: 1 } ]
`;

const CONFIGS: Record<string, string> = {
  direct: `${io('')}sequence_batching {\n  max_sequence_idle_microseconds: 5000000\n  direct { }\n  ${CONTROLS}\n}\n`,
  oldest: `${io('')}sequence_batching {\n  max_sequence_idle_microseconds: 5000000\n  oldest { max_candidate_sequences: 64 max_queue_delay_microseconds: 100 }\n  ${CONTROLS}\n}\n`,
  // The client keeps the state: START, READY and ACC_IN are ordinary inputs; ACC_OUT an ordinary output.
  plain: `${io(`,
  { name: "START" data_type: TYPE_INT32 dims: [ 1 ] },
  { name: "READY" data_type: TYPE_INT32 dims: [ 1 ] },
  { name: "ACC_IN" data_type: TYPE_INT32 dims: [ 1 ] }`)}dynamic_batching { max_queue_delay_microseconds: 100 }\n`,
};

interface Figures {
  readonly perSecond: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly sequences: number;
}

/** Runs SEQUENCES sequence loops for DURATION_MS; a sequence that started finishes, so the measured requests include no half sequence at the end. */
async function run(client: HttpClient, model: string, isPlain: boolean, durationMs: number): Promise<Figures> {
  let nextId = 1;
  let sequences = 0;
  const latencies: number[] = [];
  const startMs = performance.now();
  const endMs = startMs + durationMs;
  await Promise.all(
    Array.from({ length: SEQUENCES }, async () => {
      while (performance.now() < endMs) {
        const id = nextId++;
        let sum = 0;
        for (let i = 0; i < LENGTH; i++) {
          const value = (id % 7) + i;
          const inputs = [{ name: 'INPUT', datatype: 'INT32' as const, shape: [1, 1], data: [value] }];
          if (isPlain) {
            inputs.push(
              { name: 'START', datatype: 'INT32', shape: [1, 1], data: [i === 0 ? 1 : 0] },
              { name: 'READY', datatype: 'INT32', shape: [1, 1], data: [1] },
              { name: 'ACC_IN', datatype: 'INT32', shape: [1, 1], data: [sum] },
            );
          }
          const sentMs = performance.now();
          const result = await client.infer(model, inputs, isPlain ? {} : { sequenceId: id, sequenceStart: i === 0, sequenceEnd: i === LENGTH - 1 });
          latencies.push(performance.now() - sentMs);
          sum += value;
          const got = (result.data('OUTPUT') as Int32Array)[0];
          if (got !== sum) throw new Error(`${model}: sequence ${id} step ${i} answered ${got}, expected ${sum}`);
        }
        sequences++;
      }
    }),
  );
  const elapsedMs = performance.now() - startMs;
  latencies.sort((a, b) => a - b);
  const at = (p: number): number => latencies[Math.min(latencies.length - 1, Math.floor(p * latencies.length))]!;
  return { perSecond: latencies.length / (elapsedMs / 1000), p50Ms: at(0.5), p99Ms: at(0.99), sequences };
}

const repository = await mkdtemp(join(tmpdir(), 'nereid-bench-sequence-'));
for (const [name, config] of Object.entries(CONFIGS)) {
  await cp(join(ROOT, 'examples/model_repository/accumulator'), join(repository, name), { recursive: true });
  await writeFile(join(repository, name, 'config.pbtxt'), `name: "${name}"\n${config}`);
}
const nereid = await startNereid(repository);
const client = new HttpClient(`127.0.0.1:${nereid.httpPort}`);
const rows: string[] = [];
try {
  for (const model of ['direct', 'oldest', 'plain']) {
    await run(client, model, model === 'plain', 1000);
    const figures = await run(client, model, model === 'plain', DURATION_MS);
    rows.push(`| ${model} | ${figures.perSecond.toFixed(0)} | ${figures.p50Ms.toFixed(2)} / ${figures.p99Ms.toFixed(2)} | ${figures.sequences} |`);
  }
} finally {
  await client.close();
  nereid.stop();
  await rm(repository, { recursive: true, force: true });
}
console.log(`${SEQUENCES} concurrent sequences of ${LENGTH} requests, ${DURATION_MS / 1000} s each\n`);
console.log('| model | requests/s | p50 / p99 ms | sequences completed |');
console.log('|---|---:|---:|---:|');
for (const row of rows) console.log(row);
