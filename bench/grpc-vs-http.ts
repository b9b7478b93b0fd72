/**
 * gRPC beside HTTP for the same models and concurrencies, measured in one run against one Nereid
 * server: ResNet-18 and the MLP of bench/batching (behind the dynamic batcher), concurrency 1, 8, 32
 * and 64, throughput and p50/p99, and the gRPC / HTTP ratios.
 *
 *   npm run build && node --import tsx bench/grpc-vs-http.ts        (BENCH_DURATION_S, default 5)
 *
 * Both clients live in this process and send what Triton's clients send: HTTP with the binary data
 * extension over keep-alive connections (one per unit of concurrency), gRPC ModelInfer with
 * raw_input_contents over one HTTP/2 channel with a 16 MiB flow-control window. The model files come
 * from bench/batching/make_models.py (Debian's python3-torch), made on the first run.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { fileURLToPath } from 'node:url';
import { credentials } from '@grpc/grpc-js';
import { loadGrpcServices } from '../src/frontends/grpc/grpc-server.js';
import { measure, startNereid } from './harness.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const WORK = `${ROOT}bench/batching/.work`;
const DURATION_MS = Number(process.env.BENCH_DURATION_S ?? 5) * 1000;
const CONCURRENCY = [1, 8, 32, 64];
const MODELS = [
  { name: 'mlp_batch', input: 'INPUT', shape: [1, 64], sample: 'mlp' },
  { name: 'resnet18_batch', input: 'INPUT', shape: [1, 3, 224, 224], sample: 'resnet18' },
];

function httpSender(port: number, model: string, input: string, shape: number[], bytes: Buffer, agent: Agent): () => Promise<void> {
  const json = Buffer.from(JSON.stringify({ inputs: [{ name: input, shape, datatype: 'FP32', parameters: { binary_data_size: bytes.byteLength } }], parameters: { binary_data_output: true } }));
  const body = Buffer.concat([json, bytes]);
  const headers = { 'inference-header-content-length': String(json.byteLength), 'content-length': String(body.byteLength) };
  return () =>
    new Promise((resolve, reject) => {
      const req = request({ host: '127.0.0.1', port, path: `/v2/models/${model}/infer`, method: 'POST', agent, headers }, (res) => {
        res.resume();
        res.on('end', () => (res.statusCode === 200 ? resolve() : reject(new Error(`HTTP ${res.statusCode}`))));
      });
      req.on('error', reject);
      req.end(body);
    });
}

function grpcSender(client: unknown, model: string, input: string, shape: number[], bytes: Buffer): () => Promise<void> {
  const message = { model_name: model, inputs: [{ name: input, datatype: 'FP32', shape }], raw_input_contents: [bytes] };
  const infer = (client as { ModelInfer: (m: object, cb: (e: Error | null) => void) => void }).ModelInfer.bind(client);
  return () => new Promise((resolve, reject) => infer(message, (error) => (error !== null ? reject(error) : resolve())));
}

if (!existsSync(`${WORK}/model_repository/resnet18_batch`)) {
  spawnSync('/usr/bin/python3', [`${ROOT}bench/batching/make_models.py`], { stdio: 'inherit' });
}
const Client = loadGrpcServices().inference;
const nereid = await startNereid(`${WORK}/model_repository`);
const rows: string[] = [];
try {
  for (const model of MODELS) {
    const bytes = readFileSync(`${WORK}/samples/${model.sample}.input.bin`);
    for (const concurrency of CONCURRENCY) {
      const agent = new Agent({ keepAlive: true, maxSockets: concurrency });
      const http = await measure(concurrency, DURATION_MS, httpSender(nereid.httpPort, model.name, model.input, model.shape, bytes, agent));
      agent.destroy();
      const client = new Client(`127.0.0.1:${nereid.grpcPort}`, credentials.createInsecure(), {
        'grpc.max_receive_message_length': -1,
        'grpc-node.flow_control_window': 16 * 1024 * 1024,
      });
      const grpc = await measure(concurrency, DURATION_MS, grpcSender(client, model.name, model.input, model.shape, bytes));
      client.close();
      const row =
        `| ${model.name} | ${concurrency} | ${http.perSecond.toFixed(0)} | ${http.p50Ms.toFixed(2)} / ${http.p99Ms.toFixed(2)} | ` +
        `${grpc.perSecond.toFixed(0)} | ${grpc.p50Ms.toFixed(2)} / ${grpc.p99Ms.toFixed(2)} | ${(grpc.perSecond / http.perSecond).toFixed(2)} |`;
      rows.push(row);
      console.error(row);
    }
  }
} finally {
  nereid.stop();
}
console.log(`${DURATION_MS / 1000} s per point, clients in the bench process\n`);
console.log('| model | concurrency | HTTP infer/s | HTTP p50 / p99 ms | gRPC infer/s | gRPC p50 / p99 ms | gRPC / HTTP |');
console.log('|---|---:|---:|---:|---:|---:|---:|');
for (const row of rows) console.log(row);
process.exit(0);
