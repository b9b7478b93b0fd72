import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import { EXAMPLES, type TestServer, binaryBody, bytesOf, readInferResponse, startTestServer } from '../helpers/server.js';

const samples = JSON.parse(readFileSync(new URL('../fixtures/digits_samples.json', import.meta.url), 'utf8')) as {
  images: number[][];
  labels: number[];
  predicted: number[];
  probabilities: number[][];
};

describe('digits classifier (scikit-learn 8x8 digits, exported to ONNX)', () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer({ modelRepositories: [EXAMPLES] });
  });
  after(() => server.close());

  test('a batch of ten held-out images is classified as scikit-learn does', async () => {
    const pixels = new Float32Array(samples.images.flat());
    const { body, headers } = binaryBody(
      {
        inputs: [{ name: 'INPUT', shape: [10, 64], datatype: 'FP32', parameters: { binary_data_size: pixels.byteLength } }],
        outputs: [{ name: 'PROBABILITIES', parameters: { binary_data: true } }],
      },
      [bytesOf(pixels)],
    );
    const response = await server.post('/v2/models/digits/infer', body, { headers });
    assert.equal(response.status, 200);
    const { json, binary } = await readInferResponse(response);
    assert.deepEqual(json.outputs[0]!.shape, [10, 10]);
    const probabilities = new Float32Array(binary.buffer.slice(binary.byteOffset, binary.byteOffset + binary.byteLength));
    for (let i = 0; i < 10; i++) {
      const row = [...probabilities.subarray(i * 10, i * 10 + 10)];
      assert.equal(row.indexOf(Math.max(...row)), samples.predicted[i], `image ${i}`);
      row.forEach((p, k) => assert.ok(Math.abs(p - samples.probabilities[i]![k]!) < 1e-5, `image ${i} class ${k}: ${p}`));
    }
    assert.deepEqual(samples.predicted, samples.labels);
  });

  test('JSON request for one image', async () => {
    const response = await server.post('/v2/models/digits/infer', {
      inputs: [{ name: 'INPUT', shape: [1, 64], datatype: 'FP32', data: samples.images[3] }],
    });
    assert.equal(response.status, 200);
    const row = ((await response.json()) as { outputs: Array<{ data: number[] }> }).outputs[0]!.data;
    assert.equal(row.indexOf(Math.max(...row)), samples.labels[3]);
  });

  test('classification returns the top classes with their labels, as tritonclient class_count asks', async () => {
    const pixels = samples.images.slice(0, 2).flat();
    const probabilities = ((await (
      await server.post('/v2/models/digits/infer', { inputs: [{ name: 'INPUT', shape: [2, 64], datatype: 'FP32', data: pixels }] })
    ).json()) as { outputs: Array<{ data: number[] }> }).outputs[0]!.data;
    const response = await server.post('/v2/models/digits/infer', {
      inputs: [{ name: 'INPUT', shape: [2, 64], datatype: 'FP32', data: pixels }],
      outputs: [{ name: 'PROBABILITIES', parameters: { classification: 2, binary_data: false } }],
    });
    assert.equal(response.status, 200);
    const output = ((await response.json()) as { outputs: Array<{ datatype: string; shape: number[]; data: string[] }> }).outputs[0]!;
    const words = ['zero', 'one', 'two', 'three', 'four', 'five', 'six', 'seven', 'eight', 'nine'];
    const expected = [0, 1].flatMap((row) => {
      const values = probabilities.slice(row * 10, row * 10 + 10);
      const order = values.map((_, i) => i).sort((a, b) => values[b]! - values[a]!);
      return order.slice(0, 2).map((i) => `${values[i]!.toFixed(6)}:${i}:${words[i]}`);
    });
    assert.deepEqual(output, { name: 'PROBABILITIES', datatype: 'BYTES', shape: [2, 2], data: expected });
    assert.equal(output.data[0]!.split(':')[1], String(samples.labels[0]));
  });

  test('config names the label file', async () => {
    const config = (await (await server.get('/v2/models/digits/config')).json()) as { output: Array<{ label_filename: string }> };
    assert.equal(config.output[0]!.label_filename, 'labels.txt');
  });
});
