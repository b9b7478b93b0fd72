import assert from 'node:assert/strict';
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, test } from 'node:test';
import { FIXED_TYPES, VALUES, serializeStrings } from '../helpers/edge-values.js';
import { FIXTURES, type TestServer, binaryBody, binaryOutputs, bytesOf, readInferResponse, startTestServer } from '../helpers/server.js';

const JS_REPOSITORY = fileURLToPath(new URL('../fixtures/js_repository', import.meta.url));

/** A [rows, 512] FP32 tensor whose values name the request (`seed`) and the element. */
function distinctTensor(rows: number, seed: number): Float32Array {
  return Float32Array.from({ length: rows * 512 }, (_, index) => seed * 1000 + (index % 997));
}

/**
 * Large bodies (from 64 KiB: past the one-step lane, joined and aligned by join-body.ts), many at once:
 * every request must be answered from its own data.
 */
describe('large request bodies, many at once', () => {
  let server: TestServer;
  let repository: string;
  before(async () => {
    repository = mkdtempSync(join(tmpdir(), 'nereid-large-bodies-'));
    cpSync(join(FIXTURES, 'nobatch_fp32'), join(repository, 'nobatch_fp32'), { recursive: true });
    cpSync(join(JS_REPOSITORY, 'js_types'), join(repository, 'js_types'), { recursive: true });
    server = await startTestServer({ modelRepositories: [repository] });
  });
  after(async () => {
    await server.close();
    rmSync(repository, { recursive: true, force: true });
  });

  test('ONNX Runtime: 3 rounds of 8 concurrent 1 MiB requests, each answered with twice its own input', async () => {
    for (let round = 0; round < 3; round++) {
      await Promise.all(
        Array.from({ length: 8 }, async (_, slot) => {
          const input = distinctTensor(512, round * 8 + slot);
          const { body, headers } = binaryBody(
            { inputs: [{ name: 'INPUT0', datatype: 'FP32', shape: [512, 512], parameters: { binary_data_size: input.byteLength } }], parameters: { binary_data_output: true } },
            [bytesOf(input)],
          );
          const response = await server.post('/v2/models/nobatch_fp32/infer', body, { headers });
          assert.equal(response.status, 200, await response.clone().text());
          const { json, binary } = await readInferResponse(response);
          const output = binaryOutputs(json, binary).get('OUTPUT0')!;
          assert.deepEqual(new Float32Array(output.buffer.slice(output.byteOffset, output.byteOffset + output.byteLength)), input.map((value) => value * 2));
        }),
      );
    }
  });

  test('a model that answers with its input: the reply, a view of the body, is sent whole before its memory is used again', async () => {
    const strings = serializeStrings(['a', 'b', 'c', 'd']);
    const send = async (seed: number): Promise<void> => {
      const large = distinctTensor(256, seed);
      const tensors = FIXED_TYPES.map((type) => (type === 'FP32' ? bytesOf(large) : bytesOf(VALUES[type].array)));
      const { body, headers } = binaryBody(
        {
          inputs: [
            ...FIXED_TYPES.map((type, i) => ({ name: `INPUT_${type}`, datatype: type, shape: [1, type === 'FP32' ? large.length : 3], parameters: { binary_data_size: tensors[i]!.byteLength } })),
            { name: 'INPUT_BYTES', datatype: 'BYTES', shape: [1, 4], parameters: { binary_data_size: strings.byteLength } },
          ],
          parameters: { binary_data_output: true },
        },
        [...tensors, strings],
      );
      const response = await server.post('/v2/models/js_types/infer', body, { headers });
      assert.equal(response.status, 200, await response.clone().text());
      const { json, binary } = await readInferResponse(response);
      assert.deepEqual(binaryOutputs(json, binary).get('OUTPUT_FP32'), bytesOf(large));
    };
    for (let round = 0; round < 3; round++) await Promise.all(Array.from({ length: 4 }, (_, slot) => send(round * 4 + slot + 1)));
  });
});
