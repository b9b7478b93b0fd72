import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { loadModelSpec } from '../../config/model-spec.js';
import { parseModelConfig } from '../../config/parse-model-config.js';
import { NereidError } from '../../kernel/errors.js';
import type { InferRequest } from '../../kernel/infer-request.js';
import type { ModelSpec } from '../../kernel/model-spec.js';
import { responseParametersOf } from '../../kernel/response-parameters.js';
import type { Tensor } from '../../kernel/tensor.js';
import { readIdentitySettings } from './identity-config.js';
import { IdentityInstance } from './identity-instance.js';

/** FP32 INPUT0 [4] seen as [2, 2], BYTES INPUT1 [-1], optional INT16 INPUT2 [-1, 3]; batching. */
const CONFIG = `name: "echo"
backend: "identity"
max_batch_size: 8
input [
  { name: "INPUT0" data_type: TYPE_FP32 dims: [ 4 ] reshape: { shape: [ 2, 2 ] } },
  { name: "INPUT1" data_type: TYPE_STRING dims: [ -1 ] },
  { name: "INPUT2" data_type: TYPE_INT16 dims: [ -1, 3 ] optional: true }
]
output [
  { name: "OUTPUT0" data_type: TYPE_FP32 dims: [ 2, 2 ] },
  { name: "OUTPUT1" data_type: TYPE_STRING dims: [ -1 ] },
  { name: "OUTPUT2" data_type: TYPE_INT16 dims: [ -1, 3 ] }
]`;

async function makeInstance(delayMs: number, counted: number[] = []): Promise<{ instance: IdentityInstance; spec: ModelSpec }> {
  const config = parseModelConfig(CONFIG, 'config.pbtxt');
  const spec = await loadModelSpec(config, 1, '/nonexistent');
  const { inputOf } = readIdentitySettings(config, spec);
  return { spec, instance: new IdentityInstance({ name: 'echo_0', spec, inputOf, delayMs, countInputBytes: (bytes) => counted.push(bytes) }) };
}

const text = (value: string): Uint8Array => new TextEncoder().encode(value);

function request(rows: number, outputs?: string[]): InferRequest {
  const inputs: Tensor[] = [
    { name: 'INPUT0', dataType: 'FP32', shape: [rows, 4], data: Float32Array.from({ length: rows * 4 }, (_, i) => i + 0.5) },
    { name: 'INPUT1', dataType: 'BYTES', shape: [rows, 2], data: Array.from({ length: rows * 2 }, (_, i) => text(`s${i}`)) },
  ];
  return { modelName: 'echo', id: '', inputs, parameters: {}, ...(outputs !== undefined ? { outputs: outputs.map((name) => ({ name })) } : {}) };
}

const plain = (tensors: readonly Tensor[] | NereidError) => {
  assert.ok(!(tensors instanceof NereidError), tensors instanceof NereidError ? tensors.message : '');
  return tensors.map(({ name, dataType, shape, data }) => ({ name, dataType, shape, data: Array.isArray(data) ? data.map((e) => new TextDecoder().decode(e)) : [...(data as Float32Array)] }));
};

describe('an identity instance', () => {
  test('copies each requested input to its output, in the order asked, with the client shape and zeros for a missing optional input', async () => {
    const counted: number[] = [];
    const { instance } = await makeInstance(0, counted);
    const executed = await instance.execute([request(1, ['OUTPUT2', 'OUTPUT1', 'OUTPUT0']), request(2, ['OUTPUT0'])]);
    assert.deepEqual(plain(executed.responses[0]!), [
      { name: 'OUTPUT2', dataType: 'INT16', shape: [1, 1, 3], data: [0, 0, 0] },
      { name: 'OUTPUT1', dataType: 'BYTES', shape: [1, 2], data: ['s0', 's1'] },
      { name: 'OUTPUT0', dataType: 'FP32', shape: [1, 2, 2], data: [0.5, 1.5, 2.5, 3.5] },
    ]);
    assert.deepEqual(plain(executed.responses[1]!), [{ name: 'OUTPUT0', dataType: 'FP32', shape: [2, 2, 2], data: [0.5, 1.5, 2.5, 3.5, 4.5, 5.5, 6.5, 7.5] }]);
    // The BYTES input counts its 4-byte length prefixes; the optional zeros count nothing.
    assert.deepEqual(counted, [2 * (4 + 2), 16, 32]);
    for (const response of executed.responses) {
      assert.deepEqual(responseParametersOf(response as Tensor[]), { param0: 'an example string parameter', param1: 42, param2: false });
    }
  });

  test('answers with copies, not views of the request', async () => {
    const { instance } = await makeInstance(0);
    const sent = request(1, ['OUTPUT0', 'OUTPUT1']);
    const outputs = (await instance.execute([sent])).responses[0] as Tensor[];
    (sent.inputs[0]!.data as Float32Array)[0] = 99;
    (sent.inputs[1]!.data as Uint8Array[])[0]![0] = 0x7a;
    assert.deepEqual(plain(outputs).map((output) => output.data), [[0.5, 1.5, 2.5, 3.5], ['s0', 's1']]);
  });

  test('a missing optional BYTES input fails only its request', async () => {
    const config = parseModelConfig(
      'name: "b"\nbackend: "identity"\ninput [{ name: "INPUT0" data_type: TYPE_STRING dims: [ 1 ] optional: true }, { name: "INPUT1" data_type: TYPE_INT32 dims: [ 1 ] }]\n' +
        'output [{ name: "OUTPUT0" data_type: TYPE_STRING dims: [ 1 ] }, { name: "OUTPUT1" data_type: TYPE_INT32 dims: [ 1 ] }]',
      'config.pbtxt',
    );
    const spec = await loadModelSpec(config, 1, '/nonexistent');
    const instance = new IdentityInstance({ name: 'b_0', spec, inputOf: readIdentitySettings(config, spec).inputOf, delayMs: 0 });
    const int = { name: 'INPUT1', dataType: 'INT32', shape: [1], data: Int32Array.of(7) } as const;
    const executed = instance.executeNow({ modelName: 'b', id: '', inputs: [int], parameters: {} });
    assert.deepEqual(executed.responses[0], new NereidError('UNSUPPORTED', "model 'b': optional input 'INPUT0' is missing, and the identity backend has no zeros of BYTES for output 'OUTPUT0'"));
    assert.equal((executed.responses[0] as NereidError).status, 'UNSUPPORTED');
  });

  test('waits its delay once per execution, reports it as compute time, and runs in the step only without one', async () => {
    const { instance: quick } = await makeInstance(0);
    assert.equal(quick.canExecuteNow, true);
    const { instance } = await makeInstance(60);
    assert.equal(instance.canExecuteNow, false);
    const start = performance.now();
    const executed = await instance.execute([request(1), request(1)]);
    const elapsedMs = performance.now() - start;
    assert.ok(elapsedMs >= 59 && elapsedMs < 1000, `${elapsedMs} ms`);
    assert.ok(executed.timing.inferNs >= 59e6, `${executed.timing.inferNs} ns`);
    assert.deepEqual([executed.timing.inputNs, executed.timing.outputNs], [0, 0]);
  });

  test('closed during its delay, fails the execution with UNAVAILABLE', async () => {
    const { instance } = await makeInstance(10_000);
    const executing = instance.execute([request(1)]);
    await instance.close();
    await assert.rejects(executing, new NereidError('UNAVAILABLE', "instance 'echo_0' of model 'echo' was stopped before the request finished"));
    assert.equal(instance.canExecuteNow, false);
  });
});
