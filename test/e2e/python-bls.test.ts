import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { PYTHON_FIXTURES, inferJson, outputData } from '../helpers/python-models.js';
import { EXAMPLES, type TestServer, startTestServer } from '../helpers/server.js';

const range = (start: number, count: number): number[] => Array.from({ length: count }, (_, i) => start + i);

/** A bls_add_sub request: MODEL_NAME picks the model that computes OUTPUT0 and OUTPUT1. */
const blsRequest = (modelName: string, batch: number): unknown => ({
  inputs: [
    { name: 'MODEL_NAME', shape: [batch, 1], datatype: 'BYTES', data: Array(batch).fill(modelName) },
    { name: 'INPUT0', shape: [batch, 16], datatype: 'INT32', data: range(0, 16 * batch) },
    { name: 'INPUT1', shape: [batch, 16], datatype: 'INT32', data: Array(16 * batch).fill(2) },
  ],
});

describe('Python backend: Business Logic Scripting (models calling models)', () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer({
      modelRepositories: [PYTHON_FIXTURES, EXAMPLES],
      modelControlMode: 'explicit',
      startupModels: ['add_sub', 'bls_add_sub', 'bls_bytes', 'bls_async', 'bls_stream', 'repeat', 'js_add_sub', 'simple'],
    });
  });
  after(() => server.close());

  test("a BLS model in the shape of Triton's example calls Python, ONNX and JavaScript models and returns their results", async () => {
    for (const target of ['add_sub', 'simple', 'js_add_sub']) {
      for (const batch of [1, 2]) {
        const { status, json } = await inferJson(server, 'bls_add_sub', blsRequest(target, batch));
        assert.equal(status, 200, `${target}: ${JSON.stringify(json)}`);
        assert.deepEqual(json.outputs, [
          { name: 'OUTPUT0', datatype: 'INT32', shape: [batch, 16], data: range(2, 16 * batch) },
          { name: 'OUTPUT1', datatype: 'INT32', shape: [batch, 16], data: range(-2, 16 * batch) },
        ]);
      }
    }
  });

  test('a BLS call takes its text arguments as bytes, as Triton does (the model name straight from a BYTES input)', async () => {
    const { status, json } = await inferJson(server, 'bls_bytes', {
      inputs: [
        { name: 'MODEL_NAME', shape: [1], datatype: 'BYTES', data: ['add_sub'] },
        { name: 'INPUT0', shape: [1, 16], datatype: 'INT32', data: range(0, 16) },
        { name: 'INPUT1', shape: [1, 16], datatype: 'INT32', data: Array(16).fill(2) },
      ],
    });
    assert.equal(status, 200, JSON.stringify(json));
    assert.deepEqual(json.outputs, [
      { name: 'OUTPUT0', datatype: 'INT32', shape: [1, 16], data: range(2, 16) },
      { name: 'OUTPUT1', datatype: 'INT32', shape: [1, 16], data: range(-2, 16) },
    ]);
  });

  test('the calls go through the called models, whose statistics count them', async () => {
    const successes = async (model: string): Promise<number> => {
      const stats = (await (await server.get(`/v2/models/${model}/stats`)).json()) as { model_stats: Array<{ inference_stats: { success: { count: number } } }> };
      return stats.model_stats[0]!.inference_stats.success.count;
    };
    const before = await successes('simple');
    await inferJson(server, 'bls_add_sub', blsRequest('simple', 1));
    assert.equal(await successes('simple'), before + 1);
  });

  test("an error of the called model comes back as the response's error, which the BLS model raises", async () => {
    const { status, json } = await inferJson(server, 'bls_add_sub', blsRequest('no_such_model', 1));
    assert.equal(status, 500);
    assert.match(json.error!, /^Failed to process the request\(s\) for model instance 'bls_add_sub_0', message: TritonModelException: .*'no_such_model'/);
  });

  test('async_exec calls two models at once from an async execute', async () => {
    const { status, json } = await inferJson(server, 'bls_async', {
      inputs: [
        { name: 'INPUT0', shape: [1, 16], datatype: 'INT32', data: range(100, 16) },
        { name: 'INPUT1', shape: [1, 16], datatype: 'INT32', data: range(0, 16) },
      ],
    });
    assert.equal(status, 200, JSON.stringify(json));
    assert.deepEqual(outputData(json, 'SUM'), range(0, 16).map((i) => 100 + 2 * i));
    assert.deepEqual(outputData(json, 'DIFFERENCE'), Array(16).fill(100));
  });

  test('exec(decoupled=True) iterates over every response of a decoupled model', async () => {
    const { status, json } = await inferJson(server, 'bls_stream', { inputs: [{ name: 'IN', shape: [4], datatype: 'INT32', data: [1, 2, 3, 4] }] });
    assert.equal(status, 200, JSON.stringify(json));
    assert.deepEqual(outputData(json, 'SUM'), [10]);
    assert.deepEqual(outputData(json, 'COUNT'), [4]);
    const none = await inferJson(server, 'bls_stream', { inputs: [{ name: 'IN', shape: [0], datatype: 'INT32', data: [] }] });
    assert.deepEqual(outputData(none.json, 'COUNT'), [0]);
  });

  test('an error in the stream of a decoupled model reaches the BLS model with its code', async () => {
    const { status, json } = await inferJson(server, 'bls_stream', { inputs: [{ name: 'IN', shape: [3], datatype: 'INT32', data: [1, -5, 3] }] });
    assert.equal(status, 400);
    assert.deepEqual(json, { error: 'repeat failed: element 1 is negative (-5)' });
  });
});
