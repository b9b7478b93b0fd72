// The system shared memory extension end to end, with a real second process: Python's
// multiprocessing.shared_memory creates the regions (shm_open, as tritonclient does), writes the inputs
// and reads the outputs, over HTTP (urllib) and gRPC (grpcio with stubs protoc generates at test time).
// The whole suite runs twice: with the native addon mapping the regions, and with the file fallback
// (NEREID_SHM_FALLBACK=1). Needs what test/e2e/grpc-interop.test.ts needs, plus python3-numpy.
import assert from 'node:assert/strict';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { type RunningServer, startServer } from '../../src/server.js';
import { silentLogger } from '../../src/logging/logger.js';
import { EXAMPLES } from '../helpers/server.js';
import { GRPC_PLUGIN, PYTHON, ROOT, missingGrpcPeerTools, run, skipWhenMissing } from '../helpers/python-grpc-peer.js';

const FIXTURES = join(ROOT, 'test/fixtures');
const CLIENT = join(ROOT, 'test/interop/shm_client.py');
const missing = missingGrpcPeerTools(['numpy'], 'python3-grpcio / python3-protobuf / python3-numpy');
const skip = skipWhenMissing(missing);

/** A repository of the models the client uses: the three identity models renamed apart, slow, the ensemble. */
function makeRepository(): string {
  const dir = mkdtempSync(join(tmpdir(), 'nereid-shm-models-'));
  for (const [backend, name] of [['onnxruntime', 'identity_onnx'], ['javascript', 'identity_js'], ['python', 'identity_py']] as const) {
    cpSync(join(FIXTURES, 'conformance', backend, 'identity'), join(dir, name), { recursive: true });
    const config = join(dir, name, 'config.pbtxt');
    writeFileSync(config, readFileSync(config, 'utf8').replace('name: "identity"', `name: "${name}"`));
  }
  cpSync(join(FIXTURES, 'conformance', 'javascript', 'slow'), join(dir, 'slow'), { recursive: true });
  for (const name of ['ens_two_steps', 'plus_one', 'pair']) cpSync(join(FIXTURES, 'ensemble_repository', name), join(dir, name), { recursive: true });
  cpSync(join(EXAMPLES, 'simple'), join(dir, 'simple'), { recursive: true });
  return dir;
}

type Failure = { status: number | string; message: string };
type Cases = Record<string, unknown> & { errors: Record<string, Failure | { ok: true } | boolean | { regions: number }> };

const TYPES = ['BOOL', 'UINT8', 'UINT16', 'UINT32', 'UINT64', 'INT8', 'INT16', 'INT32', 'INT64', 'FP16', 'FP32', 'FP64', 'BYTES'];

/** The statuses each protocol answers a failure with (Triton's HTTP codes and gRPC status names). */
const STATUS = {
  http: { INVALID_ARG: 400, ALREADY_EXISTS: 400, NOT_FOUND: 404, INTERNAL: 500 },
  grpc: { INVALID_ARG: 'INVALID_ARGUMENT', ALREADY_EXISTS: 'ALREADY_EXISTS', NOT_FOUND: 'NOT_FOUND', INTERNAL: 'INTERNAL' },
} as const;

for (const provider of ['mmap', 'file'] as const) {
  describe(`system shared memory with a Python peer (${provider === 'mmap' ? 'native addon' : 'file fallback, NEREID_SHM_FALLBACK=1'})`, { skip }, () => {
    let server: RunningServer;
    let repository: string;
    let stubs: string;
    let output: { http: Cases; grpc: Cases };

    before(async () => {
      if (missing !== undefined) throw new Error(`${missing}: .ci/run installs them`);
      repository = makeRepository();
      stubs = mkdtempSync(join(tmpdir(), 'nereid-shm-stubs-'));
      await run('protoc', [`--python_out=${stubs}`, `--grpc_out=${stubs}`, `--plugin=protoc-gen-grpc=${GRPC_PLUGIN}`, '-I', 'src/protocol/proto', 'grpc_service.proto', 'model_config.proto'], 60_000);
      const previous = process.env.NEREID_SHM_FALLBACK;
      process.env.NEREID_SHM_FALLBACK = provider === 'file' ? '1' : '0';
      try {
        server = await startServer({
          modelRepositories: [repository],
          httpPort: 0,
          httpAddress: '127.0.0.1',
          grpcPort: 0,
          grpcAddress: '127.0.0.1',
          isMetricsAllowed: false,
          isClientShmAllowed: true,
          logger: silentLogger,
        });
      } finally {
        if (previous === undefined) delete process.env.NEREID_SHM_FALLBACK;
        else process.env.NEREID_SHM_FALLBACK = previous;
      }
      output = JSON.parse(await run(PYTHON, ['-I', CLIENT, server.httpUrl!, server.grpcUrl!, stubs], 300_000)) as typeof output;
    });
    after(async () => {
      await server?.shutdown();
      rmSync(repository, { recursive: true, force: true });
      rmSync(stubs, { recursive: true, force: true });
    });

    test(`the server uses the ${provider} path`, () => {
      assert.equal(server.sharedMemory.providerKind, provider);
    });

    for (const protocol of ['http', 'grpc'] as const) {
      const status = STATUS[protocol];

      test(`${protocol}: register, status, unregister and unregister all`, () => {
        const cases = output[protocol];
        const { a, b } = cases.keys as { a: string; b: string };
        assert.deepEqual(cases.status_all, [
          { name: 'a', key: a, offset: 0, byte_size: 256 },
          { name: 'b', key: b, offset: 3000, byte_size: 1000 },
        ]);
        assert.deepEqual(cases.status_one, [{ name: 'b', key: b, offset: 3000, byte_size: 1000 }]);
        assert.deepEqual(cases.status_after_unregister, [{ name: 'b', key: b, offset: 3000, byte_size: 1000 }]);
        assert.deepEqual(cases.status_after_unregister_all, []);
        assert.deepEqual(cases.unregister_unknown, { ok: true });
      });

      for (const model of ['identity_onnx', 'identity_js', 'identity_py']) {
        test(`${protocol}: every data type in and out of regions at unaligned offsets (${model})`, () => {
          const results = output[protocol][model] as Record<string, { equal: boolean; shape: number[]; has_data: boolean }>;
          assert.deepEqual(Object.keys(results), TYPES);
          for (const type of TYPES) assert.deepEqual(results[type], { equal: true, shape: [1, 3], has_data: false }, type);
        });
      }

      test(`${protocol}: shared-memory and inline tensors in one request`, () => {
        const input0 = Array.from({ length: 16 }, (_, i) => i);
        assert.deepEqual(output[protocol].mix, { output0: input0.map((v) => v + 5), output1: input0.map((v) => v - 5) });
      });

      test(`${protocol}: an ensemble (JavaScript steps) reads its input from and writes its output to a region`, () => {
        assert.deepEqual(output[protocol].ensemble, { y: [3, 5, 7, 9, -1, -3, -5, -7], shape: [2, 4] });
      });

      test(`${protocol}: regions unregistered while a request uses them stay listed and usable until the last such request ends, then go`, () => {
        assert.deepEqual(output[protocol].unregister_during_request, {
          first: { ok: true },
          second: { ok: true },
          status_during: ['slow_in', 'slow_out'],
          reregister_during: { status: status.ALREADY_EXISTS, message: "shared memory region 'slow_in' already in manager" },
          status_between: ['slow_in', 'slow_out'],
          status_after: [],
          output_equal: true,
          after: { status: status.NOT_FOUND, message: "Unable to find shared memory region: 'slow_in'" },
        });
      });

      test(`${protocol}: each failure with Triton's status and text`, () => {
        const { errors } = output[protocol];
        const key = `/nereid_no_such_object_`;
        assert.equal((errors.bad_key as Failure).status, status.INTERNAL);
        assert.match((errors.bad_key as Failure).message, new RegExp(`^Unable to open shared memory region: '${key}[0-9a-f]{8}'$`));
        const expected: Record<string, Failure | { ok: true } | boolean | { regions: number }> = {
          duplicate: { status: status.ALREADY_EXISTS, message: "shared memory region 'r' already in manager" },
          bad_key: errors.bad_key!,
          past_object: { status: status.INVALID_ARG, message: "failed to register shared memory region 's': invalid args" },
          reserved_key: {
            status: status.INVALID_ARG,
            message: "cannot register shared memory region 's' with key 'triton_python_backend_shm_region_x' as the key contains the reserved prefix 'triton_python_backend_shm_region_'",
          },
          status_unknown: { status: status.NOT_FOUND, message: "Unable to find system shared memory region: 's'" },
          infer_unknown_region: { status: status.NOT_FOUND, message: "Unable to find shared memory region: 'nope'" },
          infer_byte_size_mismatch: {
            status: status.INVALID_ARG,
            message: "input byte size mismatch for input 'INPUT0' for model 'simple'. Expected 64, got 60 (shape [1,16] of INT32; shared_memory_byte_size is 60)",
          },
          infer_offset_past_region: { status: status.INVALID_ARG, message: "Invalid offset for shared memory region: 'r'" },
          infer_past_region: { status: status.INVALID_ARG, message: "Invalid offset + byte size for shared memory region: 'r'" },
          output_too_small: {
            status: status.INTERNAL,
            message: "shared memory size specified with the request for output 'OUTPUT0' (32 bytes) should be at least 64 bytes to hold the results",
          },
          output_past_region: { status: status.INVALID_ARG, message: "Invalid offset + byte size for shared memory region: 'r'" },
          region_unchanged_after_failures: true,
          cuda_register: { status: status.INVALID_ARG, message: "failed to register CUDA shared memory region: 'c', GPUs not supported" },
          cuda_status_one: { status: status.NOT_FOUND, message: "Unable to find cuda shared memory region: 'c'" },
          cuda_unregister: { ok: true },
        };
        if (protocol === 'http') {
          const both = "Input must set only one of the following fields: 'data', 'binary_data_size' in 'parameters', 'shared_memory_region' in 'parameters'. But set";
          Object.assign(expected, {
            both_data_and_region: { status: 400, message: `${both} 'data' 'shared_memory_region'` },
            both_binary_and_region: { status: 400, message: `${both} 'binary_data_size' 'shared_memory_region'` },
            register_no_key: { status: 400, message: "Shared memory register request has no 'key' field" },
            register_no_byte_size: { status: 400, message: "Shared memory register request has no 'byte_size' field" },
            register_key_not_string: { status: 400, message: 'attempt to access JSON non-string as string' },
            register_no_region_name: { status: 400, message: "'region name' is necessary to register system shared memory region" },
            output_offset_2_64_minus_32: { status: 400, message: "Invalid offset for shared memory region: 'r'" },
            output_size_overflow: {
              status: 400,
              message: "Integer overflow detected: byte_size (18446744073709551584) + offset (32) exceeds maximum value (18446744073709551615) for region 'r'",
            },
            register_size_2_64_minus_1: { status: 400, message: "failed to register shared memory region 's': invalid args" },
            cuda_status: [],
          });
        } else {
          Object.assign(expected, {
            both_contents_and_region: { status: 'INVALID_ARGUMENT', message: "unexpected 'content' provided when using shared memory for input tensor 'INPUT0' for model 'simple'" },
            region_without_byte_size: {
              status: 'INVALID_ARGUMENT',
              message: "'shared_memory_byte_size' must be specified along with 'shared_memory_region' parameter for tensor 'INPUT0'",
            },
            cuda_status: { regions: 0 },
          });
        }
        assert.deepEqual(errors, expected);
      });
    }

    test('no region stays mapped once the client has unregistered them all', () => {
      assert.equal(server.sharedMemory.mappedCount, 0);
      assert.deepEqual(server.sharedMemory.status(), []);
    });
  });
}

describe('a server started without --allow-client-shm', () => {
  let server: RunningServer;
  before(async () => {
    server = await startServer({
      modelRepositories: [EXAMPLES],
      modelControlMode: 'explicit',
      startupModels: ['simple'],
      httpPort: 0,
      httpAddress: '127.0.0.1',
      isGrpcAllowed: false,
      isMetricsAllowed: false,
      logger: silentLogger,
    });
  });
  after(() => server?.shutdown());

  test("refuses registration and unregistration with Triton's message, lists no region and no shared memory extension", async () => {
    const name = `nereid-disallowed-${process.pid}`;
    writeFileSync(`/dev/shm/${name}`, new Uint8Array(64));
    const post = (path: string, body: unknown): Promise<Response> =>
      fetch(`${server.httpUrl}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    const refusal = { error: "Client shared memory is disabled. Start the server with '--allow-client-shm=true' to enable." };
    try {
      for (const refused of [
        await post('/v2/systemsharedmemory/region/r/register', { key: `/${name}`, byte_size: 64 }),
        await post('/v2/systemsharedmemory/region/r/unregister', {}),
        await post('/v2/systemsharedmemory/unregister', {}),
      ]) {
        assert.equal(refused.status, 503);
        assert.deepEqual(await refused.json(), refusal);
      }
    } finally {
      rmSync(`/dev/shm/${name}`, { force: true });
    }
    assert.deepEqual(await (await fetch(`${server.httpUrl}/v2/systemsharedmemory/status`)).json(), []);
    const metadata = (await (await fetch(`${server.httpUrl}/v2`)).json()) as { extensions: string[] };
    assert.equal(metadata.extensions.includes('system_shared_memory'), false);
    assert.equal(metadata.extensions.includes('cuda_shared_memory'), false);
  });
});
