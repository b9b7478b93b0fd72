import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { FIXED_TYPES, STRINGS, VALUES, serializeStrings } from '../helpers/edge-values.js';
import { FIXTURES, type TestServer, binaryBody, binaryOutputs, bytesOf, readInferResponse, startTestServer } from '../helpers/server.js';

/** Writes JSON whose big integers are bare digits (JSON.stringify cannot write them). */
function jsonWithBigInts(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) => (typeof v === 'bigint' ? `@@${v}@@` : v)).replace(/"@@(-?\d+)@@"/g, '$1');
}

describe('every data type round-trips through the identity model', () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer({ modelRepositories: [FIXTURES] });
  });
  after(() => server.close());

  test('binary in, binary out: bytes come back identical, BYTES included', async () => {
    const tensors = FIXED_TYPES.map((type) => bytesOf(VALUES[type].array));
    const strings = serializeStrings(STRINGS);
    const { body, headers } = binaryBody(
      {
        inputs: [
          ...FIXED_TYPES.map((type, i) => ({ name: `INPUT_${type}`, datatype: type, shape: [1, 3], parameters: { binary_data_size: tensors[i]!.byteLength } })),
          { name: 'INPUT_BYTES', datatype: 'BYTES', shape: [1, 3], parameters: { binary_data_size: strings.byteLength } },
        ],
        parameters: { binary_data_output: true },
      },
      [...tensors, strings],
    );
    const response = await server.post('/v2/models/identity_all_types/infer', body, { headers });
    assert.equal(response.status, 200);
    const { json, binary } = await readInferResponse(response);
    for (const output of json.outputs) assert.deepEqual(output.shape, [1, 3]);
    const byName = binaryOutputs(json, binary);
    for (const [i, type] of FIXED_TYPES.entries()) assert.deepEqual(byName.get(`OUTPUT_${type}`), tensors[i], type);
    assert.deepEqual(byName.get('OUTPUT_BYTES'), strings);
  });

  test('JSON in, JSON out: INT64 and UINT64 beyond 2^53 are exact', async () => {
    const jsonTypes = FIXED_TYPES.filter((type) => VALUES[type].json !== undefined);
    const fp16 = bytesOf(VALUES.FP16.array);
    const header = {
      inputs: [
        ...jsonTypes.map((type) => ({
          name: `INPUT_${type}`,
          datatype: type,
          shape: [1, 3],
          data: type === 'INT64' || type === 'UINT64' ? [...(VALUES[type].array as BigInt64Array)] : VALUES[type].json,
        })),
        { name: 'INPUT_FP16', datatype: 'FP16', shape: [1, 3], parameters: { binary_data_size: fp16.byteLength } },
        { name: 'INPUT_BYTES', datatype: 'BYTES', shape: [1, 3], data: STRINGS },
      ],
      outputs: [...[...jsonTypes, 'BYTES'].map((type) => ({ name: `OUTPUT_${type}` })), { name: 'OUTPUT_FP16', parameters: { binary_data: true } }],
    };
    const json = Buffer.from(jsonWithBigInts(header));
    const response = await server.post('/v2/models/identity_all_types/infer', Buffer.concat([json, fp16]), {
      headers: { 'inference-header-content-length': String(json.byteLength) },
    });
    assert.equal(response.status, 200, await response.clone().text());
    const body = Buffer.from(await response.arrayBuffer());
    const headerLength = Number(response.headers.get('inference-header-content-length'));
    assert.deepEqual(body.subarray(headerLength), fp16);
    // Read big integers as strings: JSON.parse would round them.
    const text = body.toString('utf8', 0, headerLength).replace(/(?<![\d.])(-?\d{16,})(?![\d.eE])/g, '"$1"');
    const outputs = new Map((JSON.parse(text) as { outputs: Array<{ name: string; data?: unknown[] }> }).outputs.map((o) => [o.name, o.data]));
    for (const type of jsonTypes) {
      const expected = VALUES[type].json!;
      const actual = type === 'INT64' || type === 'UINT64' ? outputs.get(`OUTPUT_${type}`)!.map(String) : outputs.get(`OUTPUT_${type}`);
      assert.deepEqual(actual, type === 'UINT64' || type === 'INT64' ? expected.map(String) : expected, type);
    }
    assert.deepEqual(outputs.get('OUTPUT_BYTES'), STRINGS);
  });

  test('FP16 requested as JSON output is refused with a hint to use binary', async () => {
    const fp16 = bytesOf(VALUES.FP16.array);
    const inputs = FIXED_TYPES.map((type) => {
      const bytes = bytesOf(VALUES[type].array);
      return { name: `INPUT_${type}`, datatype: type, shape: [1, 3], parameters: { binary_data_size: bytes.byteLength } };
    });
    const strings = serializeStrings(STRINGS);
    const { body, headers } = binaryBody(
      {
        inputs: [...inputs, { name: 'INPUT_BYTES', datatype: 'BYTES', shape: [1, 3], parameters: { binary_data_size: strings.byteLength } }],
        outputs: [{ name: 'OUTPUT_FP16' }],
      },
      [...FIXED_TYPES.map((type) => bytesOf(VALUES[type].array)), strings],
    );
    assert.equal(fp16.byteLength, 6);
    const response = await server.post('/v2/models/identity_all_types/infer', body, { headers });
    assert.equal(response.status, 400);
    assert.deepEqual(await response.json(), {
      error: `sending FP16 data via JSON is not supported. Please use the binary data format for output (output 'OUTPUT_FP16': ask for it with the output parameter "binary_data": true, or with "binary_data_output": true for every output)`,
    });
  });
});
