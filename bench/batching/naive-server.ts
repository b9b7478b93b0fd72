/**
 * The naive way people serve a model, the baseline of bench/batching/run.ts: a minimal node:http
 * server that loads each .onnx with onnxruntime-node's default session options and, for every
 * request, parses the KServe v2 binary request, runs the model inline on the event loop (one request,
 * one run, batch as sent) and answers with a KServe v2 binary response. It serves Nereid's paths, so
 * the same wrk script measures both.
 *
 *   node --import tsx bench/batching/naive-server.ts [--port 8001] [--address 127.0.0.1] NAME=PATH.onnx [...]
 *
 * Prints `naive-server listening on ADDRESS:PORT` once it serves (`--port 0` picks a free port).
 *
 * NOTE: onnxruntime-node's `session.run()` returns a promise, but runs the model synchronously on the
 * main thread (in a setImmediate), so one request computes at a time: the naive server's concurrency
 * is the intra-op threads of its one session (ONNX Runtime's default: one per physical core).
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { InferenceSession, Tensor } from 'onnxruntime-node';
import { decodeInferMessage, encodeInferResponse } from './kserve-binary.js';

const ORT_TYPES: Record<string, 'float32' | 'float64' | 'int32' | 'int64'> = { FP32: 'float32', FP64: 'float64', INT32: 'int32', INT64: 'int64' };
const KSERVE_TYPES: Record<string, string> = { float32: 'FP32', float64: 'FP64', int32: 'INT32', int64: 'INT64' };

function parseArgs(argv: readonly string[]): { port: number; address: string; models: Map<string, string> } {
  let port = 8001;
  let address = '127.0.0.1';
  const models = new Map<string, string>();
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === '--port') port = Number(argv[++i]);
    else if (arg === '--address') address = argv[++i]!;
    else if (arg.includes('=')) models.set(arg.slice(0, arg.indexOf('=')), arg.slice(arg.indexOf('=') + 1));
    else throw new Error(`naive-server: unexpected argument '${arg}'; expected --port N, --address A or NAME=PATH.onnx`);
  }
  if (models.size === 0) throw new Error('naive-server: no model; give NAME=PATH.onnx');
  return { port, address, models };
}

function readBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

function replyError(res: ServerResponse, status: number, message: string): void {
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify({ error: message }));
}

async function infer(session: InferenceSession, modelName: string, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const body = await readBody(req);
  const headerLength = req.headers['inference-header-content-length'];
  const { tensors } = decodeInferMessage(body, headerLength === undefined ? undefined : Number(headerLength), 'inputs');
  const feeds: Record<string, Tensor> = {};
  for (const input of tensors) {
    const type = ORT_TYPES[input.datatype];
    if (type === undefined || !('bytes' in input)) throw new Error(`input '${input.name}': expected binary ${Object.keys(ORT_TYPES).join('/')} data`);
    // Copy: the bytes sit at an arbitrary offset of the body and typed arrays need aligned memory.
    const data = new Uint8Array(input.bytes).buffer;
    feeds[input.name] = new Tensor(type, type === 'int64' ? new BigInt64Array(data) : new { float32: Float32Array, float64: Float64Array, int32: Int32Array }[type](data), input.shape);
  }
  const results = await session.run(feeds);
  const outputs = session.outputNames.map((name) => {
    const tensor = results[name]!;
    const data = tensor.data as Float32Array;
    return { name, datatype: KSERVE_TYPES[tensor.type] ?? tensor.type, shape: tensor.dims, bytes: new Uint8Array(data.buffer, data.byteOffset, data.byteLength) };
  });
  const { body: reply, headerLength: replyHeaderLength } = encodeInferResponse(modelName, outputs);
  res.writeHead(200, {
    'content-type': 'application/octet-stream',
    'inference-header-content-length': String(replyHeaderLength),
    'content-length': String(reply.byteLength),
  });
  res.end(reply);
}

const { port, address, models } = parseArgs(process.argv.slice(2));
const sessions = new Map<string, InferenceSession>();
for (const [name, path] of models) sessions.set(name, await InferenceSession.create(path));

const INFER_PATH = /^\/v2\/models\/([^/]+)(?:\/versions\/[^/]+)?\/infer$/;
const server = createServer((req, res) => {
  const url = req.url ?? '/';
  if (req.method === 'GET' && (url === '/v2/health/ready' || url === '/v2/health/live')) {
    res.writeHead(200).end();
    return;
  }
  const match = req.method === 'POST' ? INFER_PATH.exec(url) : null;
  if (match === null) {
    replyError(res, 404, `no route for ${req.method} ${url}`);
    return;
  }
  const modelName = decodeURIComponent(match[1]!);
  const session = sessions.get(modelName);
  if (session === undefined) {
    replyError(res, 400, `unknown model '${modelName}'`);
    return;
  }
  infer(session, modelName, req, res).catch((error: Error) => replyError(res, 400, error.message));
});
server.listen(port, address, () => {
  const bound = server.address();
  console.log(`naive-server listening on ${address}:${typeof bound === 'object' && bound !== null ? bound.port : port}`);
});
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    server.close();
    server.closeAllConnections();
    process.exit(0);
  });
}
