/**
 * What the client library costs a load generator: client-process CPU per request of HttpClient over
 * its own keep-alive connections, HttpClient over node:http's agent, and GrpcClient, beside a bare
 * socket that writes one prebuilt request and reads the reply's length (the floor for any client).
 *
 *   npm run build && node --import tsx bench/client-cost.ts      (BENCH_DURATION_S [4], BENCH_CONCURRENCY [8])
 *
 * The server (`node dist/cli/main.js serve`, bench/harness.ts) serves examples/model_repository; the
 * clients call `simple` (two INT32 [1,16] inputs) from this process in turn, three rounds, and the
 * figure is the median round: requests per second and `process.cpuUsage()` of this process per request.
 */
import { Agent } from 'node:http';
import { connect } from 'node:net';
import { fileURLToPath } from 'node:url';
import { GrpcClient, HttpClient, type InferInput } from '../src/client/index.js';
import { startNereid } from './harness.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const DURATION_MS = Number(process.env.BENCH_DURATION_S ?? 4) * 1000;
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 8);
const INPUTS: InferInput[] = [
  { name: 'INPUT0', datatype: 'INT32', shape: [1, 16], data: new Int32Array(16) },
  { name: 'INPUT1', datatype: 'INT32', shape: [1, 16], data: new Int32Array(16).fill(1) },
];

/** One connection that sends a prebuilt request and waits for a reply with Content-Length. */
function bareSocket(port: number, request: Buffer): () => Promise<void> {
  const socket = connect(port, '127.0.0.1');
  socket.setNoDelay(true);
  let received: Buffer = Buffer.alloc(0);
  let waiting: (() => void) | undefined;
  socket.on('data', (chunk: Buffer) => {
    received = received.byteLength === 0 ? chunk : Buffer.concat([received, chunk]);
    const headEnd = received.indexOf('\r\n\r\n');
    if (headEnd < 0) return;
    const length = Number(/content-length: *(\d+)/i.exec(received.toString('latin1', 0, headEnd))![1]);
    if (received.byteLength < headEnd + 4 + length) return;
    received = received.subarray(headEnd + 4 + length);
    const done = waiting!;
    waiting = undefined;
    done();
  });
  return () =>
    new Promise<void>((resolve) => {
      waiting = resolve;
      socket.write(request);
    });
}

async function measure(makeSender: () => () => Promise<unknown>): Promise<{ perSecond: number; cpuUsPerRequest: number }> {
  const senders = Array.from({ length: CONCURRENCY }, makeSender);
  const end = performance.now() + DURATION_MS;
  let count = 0;
  const before = process.cpuUsage();
  await Promise.all(
    senders.map(async (send) => {
      while (performance.now() < end) {
        await send();
        count++;
      }
    }),
  );
  const cpu = process.cpuUsage(before);
  return { perSecond: count / (DURATION_MS / 1000), cpuUsPerRequest: (cpu.user + cpu.system) / count };
}

const nereid = await startNereid(`${ROOT}examples/model_repository`);
const json = Buffer.from(
  JSON.stringify({ inputs: INPUTS.map((input) => ({ name: input.name, shape: input.shape, datatype: input.datatype, parameters: { binary_data_size: 64 } })), parameters: { binary_data_output: true } }),
);
const body = Buffer.concat([json, Buffer.from(new Int32Array(16).buffer), Buffer.from(new Int32Array(16).fill(1).buffer)]);
const request = Buffer.concat([
  Buffer.from(`POST /v2/models/simple/infer HTTP/1.1\r\nHost: 127.0.0.1\r\nInference-Header-Content-Length: ${json.byteLength}\r\nContent-Length: ${body.byteLength}\r\n\r\n`),
  body,
]);
const pooled = new HttpClient(`127.0.0.1:${nereid.httpPort}`);
const agent = new Agent({ keepAlive: true });
const viaAgent = new HttpClient(`127.0.0.1:${nereid.httpPort}`, { agent });
const grpc = new GrpcClient(`127.0.0.1:${nereid.grpcPort}`);
const clients: Array<[string, () => () => Promise<unknown>]> = [
  ['bare socket, prebuilt request (the floor)', () => bareSocket(nereid.httpPort, request)],
  ['HttpClient (its own connections)', () => () => pooled.infer('simple', INPUTS)],
  ['HttpClient with a node:http agent', () => () => viaAgent.infer('simple', INPUTS)],
  ['GrpcClient (one HTTP/2 connection)', () => () => grpc.infer('simple', INPUTS)],
];
const rounds = new Map<string, Array<{ perSecond: number; cpuUsPerRequest: number }>>();
try {
  for (const [, make] of clients) await measure(make);
  for (let round = 0; round < 3; round++) {
    for (const [name, make] of clients) {
      const figures = await measure(make);
      rounds.set(name, [...(rounds.get(name) ?? []), figures]);
      console.error(`${name}: ${figures.perSecond.toFixed(0)} req/s, ${figures.cpuUsPerRequest.toFixed(1)} µs CPU per request`);
    }
  }
} finally {
  await Promise.all([pooled.close(), viaAgent.close(), grpc.close()]);
  agent.destroy();
  nereid.stop();
}
console.log(`simple, concurrency ${CONCURRENCY}, ${DURATION_MS / 1000} s per round, median of 3 rounds\n`);
console.log('| client | requests/s | client CPU µs per request |');
console.log('|---|---:|---:|');
for (const [name] of clients) {
  const sorted = [...rounds.get(name)!].sort((a, b) => a.cpuUsPerRequest - b.cpuUsPerRequest);
  const median = sorted[1]!;
  console.log(`| ${name} | ${median.perSecond.toFixed(0)} | ${median.cpuUsPerRequest.toFixed(1)} |`);
}
process.exit(0);
