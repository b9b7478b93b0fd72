/**
 * The channel between the main thread and an ONNX Runtime thread (issue 20), candidates side by side:
 * one request at a time, the model an identity over 16 FP32 (bench/batching/.work/onnx/identity.onnx,
 * made by `bench:hot-path`), measured as the round trip the main thread waits for.
 *
 *   postMessage    today's way: a run message of objects, its input ArrayBuffer in the transfer list,
 *                  the reply likewise
 *   sab            a SharedArrayBuffer control block of plain integers and a preallocated arena both
 *                  sides copy into (ORT refuses SAB-backed inputs: the worker copies into a reusable
 *                  ArrayBuffer); the worker sleeps in Atomics.wait, the main thread in Atomics.waitAsync
 *   sab+spin       the same, with the worker spinning SPIN_US before it sleeps and the main thread
 *                  spinning up to MAIN_SPIN_US for the answer before it sleeps
 *   inline         session.run on the main thread: no hop (the event loop is blocked meanwhile)
 *
 *   npm run bench:channel        BENCH_CHANNEL_MS [1500] per candidate and round, 2 rounds alternated;
 *                                BENCH_CHANNEL_ELEMENTS [16] FP32 elements per request (the identity model's size)
 */
import { fileURLToPath } from 'node:url';
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';
import { InferenceSession, Tensor } from 'onnxruntime-node';
import { waitAsync } from '../src/backends/onnxruntime/ort-channel.js';

const MODEL = fileURLToPath(new URL('batching/.work/onnx/identity.onnx', import.meta.url));
const SPIN_US = 50;
const MAIN_SPIN_US = 20;
// Control block (Int32 words): 0 state (0 idle, 1 request, 2 reply), 1 doorbell, 2 element count.
const STATE = 0;
const BELL = 1;
const COUNT = 2;

type Kind = 'postMessage' | 'sab' | 'sab+spin';
interface Init {
  readonly kind: Kind;
  readonly control: SharedArrayBuffer;
  readonly arena: SharedArrayBuffer;
}

const nowUs = (): number => performance.now() * 1000;

async function workerMain(): Promise<void> {
  const { kind, control, arena } = workerData as Init;
  const session = await InferenceSession.create(MODEL, { intraOpNumThreads: 1, executionProviders: ['cpu'] });
  const words = new Int32Array(control);
  const shared = new Float32Array(arena);
  let local = new Float32Array(16);
  parentPort!.postMessage('ready');
  if (kind === 'postMessage') {
    parentPort!.on('message', async (message: { id: number; feeds: Array<{ name: string; dims: number[]; data: Float32Array }> }) => {
      const feed = message.feeds[0]!;
      const results = await session.run({ INPUT: new Tensor('float32', feed.data, feed.dims) });
      const output = results.OUTPUT!;
      const data = output.data as Float32Array;
      parentPort!.postMessage({ type: 'result', id: message.id, outputs: [{ name: 'OUTPUT', type: output.type, dims: output.dims, data }] }, [data.buffer as ArrayBuffer]);
    });
    return;
  }
  let seen = 0;
  for (;;) {
    if (kind === 'sab+spin') {
      const until = nowUs() + SPIN_US;
      while (Atomics.load(words, BELL) === seen && nowUs() < until);
    }
    Atomics.wait(words, BELL, seen);
    seen = Atomics.load(words, BELL);
    if (seen < 0) return;
    const count = words[COUNT]!;
    if (local.length !== count) local = new Float32Array(count);
    local.set(shared.subarray(0, count));
    const results = await session.run({ INPUT: new Tensor('float32', local, [1, count]) });
    shared.set(results.OUTPUT!.data as Float32Array);
    Atomics.store(words, STATE, 2);
    Atomics.notify(words, STATE);
  }
}

const WORKER_BOOT = `import('tsx/esm/api').then(({ tsImport }) => tsImport(${JSON.stringify(fileURLToPath(import.meta.url))}, ${JSON.stringify(import.meta.url)}))`;

interface Candidate {
  readonly kind: Kind | 'inline';
  roundTrip(input: Float32Array): Promise<Float32Array>;
  close(): Promise<void>;
}

async function startCandidate(kind: Kind | 'inline', elements: number): Promise<Candidate> {
  if (kind === 'inline') {
    const session = await InferenceSession.create(MODEL, { intraOpNumThreads: 1, executionProviders: ['cpu'] });
    return {
      kind,
      roundTrip: async (input) => (await session.run({ INPUT: new Tensor('float32', input, [1, input.length]) })).OUTPUT!.data as Float32Array,
      close: () => session.release(),
    };
  }
  const control = new SharedArrayBuffer(64);
  const arena = new SharedArrayBuffer(elements * 4);
  const worker = new Worker(WORKER_BOOT, { eval: true, workerData: { kind, control, arena } satisfies Init });
  await new Promise((resolve) => worker.once('message', resolve));
  const close = async (): Promise<void> => {
    await worker.terminate();
  };
  if (kind === 'postMessage') {
    let nextId = 0;
    const pending = new Map<number, (data: Float32Array) => void>();
    worker.on('message', (reply: { id: number; outputs: Array<{ data: Float32Array }> }) => {
      pending.get(reply.id)!(reply.outputs[0]!.data);
      pending.delete(reply.id);
    });
    return {
      kind,
      roundTrip: (input) =>
        new Promise((resolve) => {
          const id = nextId++;
          pending.set(id, resolve);
          // The input is gathered into its own buffer per batch today (concatBatch), then transferred.
          const data = input.slice();
          worker.postMessage({ type: 'run', id, feeds: [{ name: 'INPUT', type: 'float32', dims: [1, data.length], data }], fetches: ['OUTPUT'] }, [data.buffer]);
        }),
      close,
    };
  }
  const words = new Int32Array(control);
  const shared = new Float32Array(arena);
  return {
    kind,
    roundTrip: async (input) => {
      shared.set(input);
      words[COUNT] = input.length;
      Atomics.store(words, STATE, 1);
      Atomics.add(words, BELL, 1);
      Atomics.notify(words, BELL);
      if (kind === 'sab+spin') {
        const until = nowUs() + MAIN_SPIN_US;
        while (Atomics.load(words, STATE) === 1 && nowUs() < until);
      }
      if (Atomics.load(words, STATE) === 1) {
        const waited = waitAsync(words, STATE, 1);
        if (waited.async) await waited.value;
      }
      Atomics.store(words, STATE, 0);
      return shared.slice(0, input.length);
    },
    close: async () => {
      Atomics.store(words, BELL, -1);
      Atomics.notify(words, BELL);
      await close();
    },
  };
}

async function measure(candidate: Candidate, elements: number, durationMs: number): Promise<{ perRoundTripUs: number; p50Us: number }> {
  const input = Float32Array.from({ length: elements }, (_, i) => i);
  for (let i = 0; i < 200; i++) await candidate.roundTrip(input);
  const samples: number[] = [];
  const start = nowUs();
  while (nowUs() - start < durationMs * 1000) {
    const t = nowUs();
    const output = await candidate.roundTrip(input);
    samples.push(nowUs() - t);
    if (output[elements - 1] !== elements - 1) throw new Error(`${candidate.kind}: wrong answer`);
  }
  samples.sort((a, b) => a - b);
  return { perRoundTripUs: (nowUs() - start) / samples.length, p50Us: samples[Math.floor(samples.length / 2)]! };
}

async function main(): Promise<void> {
  const durationMs = Number(process.env.BENCH_CHANNEL_MS ?? 1500);
  const sizes = (process.env.BENCH_CHANNEL_ELEMENTS ?? '16').split(',').map(Number);
  const kinds = ['postMessage', 'sab', 'sab+spin', 'inline'] as const;
  const lines = ['| elements | candidate | mean round trip µs | p50 µs |', '|---|---|---|---|'];
  for (const elements of sizes) {
    const results = new Map<string, Array<{ perRoundTripUs: number; p50Us: number }>>();
    for (let round = 0; round < 2; round++) {
      for (const kind of round === 0 ? kinds : [...kinds].reverse()) {
        const candidate = await startCandidate(kind, elements);
        const result = await measure(candidate, elements, durationMs);
        await candidate.close();
        results.set(kind, [...(results.get(kind) ?? []), result]);
        process.stderr.write(`${elements} ${kind}: ${result.perRoundTripUs.toFixed(1)} µs mean, p50 ${result.p50Us.toFixed(1)} µs\n`);
      }
    }
    for (const kind of kinds) {
      const runs = results.get(kind)!;
      const mean = (pick: (r: { perRoundTripUs: number; p50Us: number }) => number): string => (runs.reduce((sum, r) => sum + pick(r), 0) / runs.length).toFixed(1);
      lines.push(`| ${elements} | ${kind} | ${mean((r) => r.perRoundTripUs)} | ${mean((r) => r.p50Us)} |`);
    }
  }
  process.stdout.write(`${lines.join('\n')}\n`);
}

if (isMainThread) await main();
else await workerMain();
