// Wire-format interop: Python's grpcio, with stubs that protoc generates from our .proto files at test
// time, calls the real server over loopback. Neither the client's encoder nor its stubs are ours, so
// this catches what a test through our own grpc-js code cannot (field numbers, types, packing, status
// codes). Needs Debian's protobuf-compiler, protobuf-compiler-grpc, python3-grpcio and
// python3-protobuf (.ci/run installs them); without them the suite is skipped, except under CI.
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { type RunningServer, startServer } from '../../src/server.js';
import { silentLogger } from '../../src/logging/logger.js';
import { EXAMPLES } from '../helpers/server.js';
import { GRPC_PLUGIN, PYTHON, ROOT, missingGrpcPeerTools, run, skipWhenMissing } from '../helpers/python-grpc-peer.js';
import { SIMPLE_METADATA } from '../helpers/simple-model.js';

const CLIENT = join(ROOT, 'test/interop/grpc_client.py');
const missing = missingGrpcPeerTools();
const skip = skipWhenMissing(missing);

// The client's inputs (test/interop/grpc_client.py), and what `simple` must answer.
const range16 = (f: (i: number) => number): number[] => Array.from({ length: 16 }, (_, i) => f(i));
const RAW_INPUT0 = range16((i) => i);
const RAW_INPUT1 = range16(() => 1);
const TYPED_INPUT0 = range16((i) => 10 * i - 70);
const TYPED_INPUT1 = range16((i) => (i % 2 === 0 ? 1 : -1) * (i * 100_000_000 + 7));
const STREAM_INPUT0 = range16((i) => 3 * i);
const STREAM_INPUT1 = range16((i) => -i);
const sum = (a: number[], b: number[]): number[] => a.map((v, i) => v + b[i]!);
const difference = (a: number[], b: number[]): number[] => a.map((v, i) => v - b[i]!);

interface RpcError {
  error?: { code: string; details: string };
}
interface OutputTensor {
  name: string;
  datatype: string;
  shape: number[];
  encoding: 'raw' | 'contents';
  data: number[] | null;
  byte_size?: number;
}
interface InferResult extends RpcError {
  model_name: string;
  model_version: string;
  id: string;
  raw_output_contents: number;
  outputs: OutputTensor[];
}
interface StreamResponse extends Partial<InferResult> {
  id: string;
  error_message: string;
}
interface ClientOutput {
  server_live: RpcError & { live: boolean };
  server_ready: RpcError & { ready: boolean };
  server_metadata: RpcError & { name: string; version: string; extensions: string[] };
  model_metadata: RpcError & Record<string, unknown>;
  model_config: RpcError & { name: string; platform: string; max_batch_size: number; inputs: unknown[]; outputs: unknown[] };
  infer_raw: InferResult;
  infer_typed: InferResult;
  stream: RpcError & { responses: StreamResponse[] };
  unknown_model: { code: string; details: string };
}

/** Checks one add/sub response as tritonclient reads it: both outputs from raw_output_contents. */
function assertAddSub(response: Partial<InferResult>, id: string, input0: number[], input1: number[]): void {
  assert.equal(response.error, undefined, JSON.stringify(response.error));
  assert.equal(response.model_name, 'simple');
  assert.equal(response.model_version, '1');
  assert.equal(response.id, id);
  assert.equal(response.raw_output_contents, 2, 'one raw_output_contents entry per output');
  const byName = new Map((response.outputs ?? []).map((output) => [output.name, output]));
  assert.deepEqual([...byName.keys()].sort(), ['OUTPUT0', 'OUTPUT1']);
  for (const [name, expected] of [
    ['OUTPUT0', sum(input0, input1)],
    ['OUTPUT1', difference(input0, input1)],
  ] as const) {
    const output = byName.get(name)!;
    assert.deepEqual(
      { datatype: output.datatype, shape: output.shape, encoding: output.encoding, byte_size: output.byte_size, data: output.data },
      { datatype: 'INT32', shape: [1, 16], encoding: 'raw', byte_size: 64, data: expected },
      name,
    );
  }
}

describe('gRPC wire interop with Python grpcio', { skip }, () => {
  let server: RunningServer;
  let stubs: string;
  let output: ClientOutput;

  before(async () => {
    if (missing !== undefined) throw new Error(`${missing}: .ci/run installs them`);
    stubs = await mkdtemp(join(tmpdir(), 'nereid-grpc-stubs-'));
    await run(
      'protoc',
      [
        `--python_out=${stubs}`,
        `--grpc_out=${stubs}`,
        `--plugin=protoc-gen-grpc=${GRPC_PLUGIN}`,
        '-I',
        'src/protocol/proto',
        'grpc_service.proto',
        'model_config.proto',
      ],
      60_000,
    );
    server = await startServer({
      modelRepositories: [EXAMPLES],
      httpPort: 0,
      metricsPort: 0,
      grpcPort: 0,
      httpAddress: '127.0.0.1',
      grpcAddress: '127.0.0.1',
      logger: silentLogger,
    });
    assert.match(server.grpcUrl ?? '', /^127\.0\.0\.1:\d+$/);
    const stdout = await run(PYTHON, ['-I', CLIENT, server.grpcUrl!, stubs], 120_000);
    output = JSON.parse(stdout) as ClientOutput;
  });

  after(async () => {
    await server?.shutdown();
    if (stubs !== undefined) await rm(stubs, { recursive: true, force: true });
  });

  test('health and server metadata', () => {
    assert.deepEqual(output.server_live, { live: true });
    assert.deepEqual(output.server_ready, { ready: true });
    assert.equal(output.server_metadata.error, undefined, JSON.stringify(output.server_metadata.error));
    assert.equal(output.server_metadata.name, 'nereid');
    assert.match(output.server_metadata.version, /^\d+\.\d+\.\d+$/);
    assert.deepEqual(output.server_metadata.extensions, [
      'classification',
      'sequence',
      'model_repository',
      'model_repository(unload_dependents)',
      'schedule_policy',
      'model_configuration',
      'binary_tensor_data',
      'parameters',
      'statistics',
      'trace',
      'logging',
    ]);
  });

  test('model metadata has the batch dimension in shapes', () => {
    assert.deepEqual(output.model_metadata, SIMPLE_METADATA);
  });

  test('model config decodes as inference.ModelConfig', () => {
    assert.deepEqual(output.model_config, {
      name: 'simple',
      platform: 'onnxruntime_onnx',
      max_batch_size: 8,
      inputs: [
        { name: 'INPUT0', dims: [16] },
        { name: 'INPUT1', dims: [16] },
      ],
      outputs: [
        { name: 'OUTPUT0', dims: [16] },
        { name: 'OUTPUT1', dims: [16] },
      ],
    });
  });

  test('ModelInfer with raw_input_contents (as tritonclient sends)', () => {
    assertAddSub(output.infer_raw, 'raw-1', RAW_INPUT0, RAW_INPUT1);
  });

  test('ModelInfer with typed int_contents, negative and large values', () => {
    assertAddSub(output.infer_typed, 'typed-1', TYPED_INPUT0, TYPED_INPUT1);
  });

  test('ModelStreamInfer: three requests in flight, the bad one answered with an error_message', () => {
    assert.equal(output.stream.error, undefined, JSON.stringify(output.stream.error));
    const responses = output.stream.responses;
    assert.equal(responses.length, 3, JSON.stringify(responses));
    const good = responses.filter((response) => response.error_message === '');
    const bad = responses.filter((response) => response.error_message !== '');
    assert.deepEqual(good.map((response) => response.id).sort(), ['stream-1', 'stream-3']);
    assertAddSub(good.find((response) => response.id === 'stream-1')!, 'stream-1', RAW_INPUT0, RAW_INPUT1);
    assertAddSub(good.find((response) => response.id === 'stream-3')!, 'stream-3', STREAM_INPUT0, STREAM_INPUT1);
    assert.equal(bad.length, 1);
    // Both inputs are wrong: Triton names the second sent (src/kernel/triton-input-order.ts).
    assert.match(bad[0]!.error_message, /unexpected shape for input 'INPUT1' for model 'simple'\. Expected \[-1,16\], got \[1,15\]/);
    // Triton puts the failed request's id in the error response so a client can tell which one failed.
    assert.equal(bad[0]!.id, 'stream-2');
  });

  test('unknown model is INVALID_ARGUMENT with Triton\'s message', () => {
    assert.deepEqual(output.unknown_model, { code: 'INVALID_ARGUMENT', details: "Request for unknown model: 'nope' is not found" });
  });
});
