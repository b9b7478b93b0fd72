import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { after, before, describe, test } from 'node:test';
import { credentials } from '@grpc/grpc-js';
import { loadGrpcServices } from '../helpers/plain-grpc-clients.js';
import { EXAMPLES, type TestServer, startTestServer } from '../helpers/server.js';

const JS_REPOSITORY = fileURLToPath(new URL('../fixtures/js_repository', import.meta.url));
const SAMPLES = JSON.parse(readFileSync(new URL('../fixtures/digits_samples.json', import.meta.url), 'utf8')) as {
  images: number[][];
  labels: number[];
  predicted: number[];
};
const LABELS = readFileSync(new URL('../../examples/model_repository/digits/labels.txt', import.meta.url), 'utf8').split('\n');
/** The samples as 8x8 images of 0..255 pixels, what the pipelines take. */
const IMAGES = SAMPLES.images.map((image) => image.map((value) => Math.round((value * 255) / 16)));

interface Stats {
  model_stats: Array<{
    name: string;
    inference_count: number;
    execution_count: number;
    inference_stats: { success: { count: number }; fail: { count: number } };
    batch_stats: Array<{ batch_size: number; compute_infer: { count: number } }>;
  }>;
}

describe('pipelines: the digits classifier as an ensemble and as a model calling models', () => {
  let server: TestServer;
  const stats = async (model: string): Promise<Stats['model_stats'][number]> =>
    ((await (await server.get(`/v2/models/${model}/stats`)).json()) as Stats).model_stats[0]!;
  before(async () => {
    server = await startTestServer({ modelRepositories: [EXAMPLES, JS_REPOSITORY] });
  });
  after(() => server.close());

  for (const pipeline of ['digits_pipeline', 'digits_bls']) {
    test(`${pipeline}: raw 8x8 images in, the digits' labels and scores out, one request for all ten`, async () => {
      const response = await server.post(`/v2/models/${pipeline}/infer`, { inputs: [{ name: 'IMAGE', datatype: 'UINT8', shape: [10, 8, 8], data: IMAGES }] });
      assert.equal(response.status, 200);
      const json = (await response.json()) as { outputs: Array<{ name: string; shape: number[]; data: Array<string | number> }> };
      const [label, score] = json.outputs;
      assert.deepEqual([label!.name, label!.shape, score!.name, score!.shape], ['LABEL', [10, 1], 'SCORE', [10, 1]]);
      assert.deepEqual(label!.data, SAMPLES.predicted.map((digit) => LABELS[digit]));
      assert.deepEqual(SAMPLES.predicted, SAMPLES.labels);
      for (const value of score!.data as number[]) assert.ok(value > 0.5 && value <= 1, `score ${value}`);
    });
  }

  test('the ensemble and the model calling models agree on every sample, sent one by one and concurrently', async () => {
    const run = (pipeline: string, image: number[]) =>
      server
        .post(`/v2/models/${pipeline}/infer`, { inputs: [{ name: 'IMAGE', datatype: 'UINT8', shape: [1, 8, 8], data: image }] })
        .then((response) => response.json() as Promise<{ outputs: Array<{ data: unknown[] }> }>);
    const [ensemble, bls] = await Promise.all(['digits_pipeline', 'digits_bls'].map((pipeline) => Promise.all(IMAGES.map((image) => run(pipeline, image)))));
    assert.deepEqual(ensemble!.map((r) => r.outputs), bls!.map((r) => r.outputs));
    assert.deepEqual(ensemble!.map((r) => r.outputs[0]!.data[0]), SAMPLES.labels.map((digit) => LABELS[digit]));
  });

  test('over gRPC, the ensemble and the model calling models answer as over HTTP', async () => {
    const client = new (loadGrpcServices().inference)(server.grpcUrl!, credentials.createInsecure());
    try {
      for (const model of ['digits_pipeline', 'digits_bls']) {
        const reply = await new Promise<{ outputs: Array<{ name: string; shape: string[] }>; raw_output_contents: Buffer[] }>((resolve, reject) =>
          (client as unknown as { ModelInfer: (m: object, cb: (e: Error | null, r: never) => void) => void }).ModelInfer(
            { model_name: model, inputs: [{ name: 'IMAGE', datatype: 'UINT8', shape: [2, 8, 8] }], raw_input_contents: [Buffer.from(IMAGES.slice(0, 2).flat())] },
            (error, response) => (error !== null ? reject(error) : resolve(response)),
          ),
        );
        assert.deepEqual(reply.outputs.map((output) => [output.name, output.shape]), [['LABEL', ['2', '1']], ['SCORE', ['2', '1']]]);
        const labels = reply.raw_output_contents[0]!;
        assert.deepEqual([labels.subarray(4, 4 + labels.readUInt32LE(0)).toString()], [LABELS[SAMPLES.predicted[0]!]]);
      }
    } finally {
      client.close();
    }
  });

  test('statistics: the ensemble counts its requests, and each composing model counts its own', async () => {
    const before = await Promise.all(['digits_pipeline', 'digits_preprocess', 'digits', 'digits_postprocess'].map(stats));
    await server.post('/v2/models/digits_pipeline/infer', { inputs: [{ name: 'IMAGE', datatype: 'UINT8', shape: [2, 8, 8], data: IMAGES.slice(0, 2) }] });
    const after = await Promise.all(['digits_pipeline', 'digits_preprocess', 'digits', 'digits_postprocess'].map(stats));
    after.forEach((model, index) => {
      assert.equal(model.inference_stats.success.count - before[index]!.inference_stats.success.count, 1, model.name);
      assert.equal(model.inference_count - before[index]!.inference_count, 2, model.name);
    });
  });

  test('independent branches of an ensemble run at the same time', async () => {
    const response = await server.post('/v2/models/parallel_ensemble/infer', { inputs: [{ name: 'X', datatype: 'FP32', shape: [1], data: [0] }] });
    const outputs = Object.fromEntries(((await response.json()) as { outputs: Array<{ name: string; data: number[] }> }).outputs.map((o) => [o.name, o.data[0]!]));
    // Each branch started before the other ended: they overlapped.
    assert.ok(outputs.START_A! < outputs.END_B! && outputs.START_B! < outputs.END_A!, JSON.stringify(outputs));
  });

  test("a composing model's dynamic batcher batches the steps of concurrent ensemble requests", async () => {
    const responses = await Promise.all(
      [1, 2, 3, 4].map((x) => server.post('/v2/models/batched_ensemble/infer', { inputs: [{ name: 'X', datatype: 'FP32', shape: [1, 1], data: [x] }] })),
    );
    const values = await Promise.all(responses.map(async (r) => ((await r.json()) as { outputs: Array<{ data: number[] }> }).outputs[0]!.data[0]));
    assert.deepEqual(values, [2, 4, 6, 8]);
    const batcher = await stats('js_batcher');
    assert.deepEqual(batcher.batch_stats.map((b) => [b.batch_size, b.compute_infer.count]), [[4, 1]]);
    assert.equal(batcher.execution_count, 1);
  });

  test('a failing step fails only its request, and the error names the step and its model', async () => {
    const failing = server.post('/v2/models/faulty_ensemble/infer', { inputs: [{ name: 'MODE', datatype: 'BYTES', shape: [1], data: ['error'] }] });
    const fine = server.post('/v2/models/faulty_ensemble/infer', { inputs: [{ name: 'MODE', datatype: 'BYTES', shape: [1], data: ['ok'] }] });
    const [bad, good] = await Promise.all([failing, fine]);
    assert.equal(bad.status, 400);
    assert.deepEqual(await bad.json(), { error: "in ensemble 'faulty_ensemble', MODE asked for an error (step 0, model 'js_faulty')" });
    assert.equal(good.status, 200);
    const ensemble = await stats('faulty_ensemble');
    assert.equal(ensemble.inference_stats.fail.count, 1);
  });

  test('ensemble metadata and configuration are what Triton shows', async () => {
    const metadata = (await (await server.get('/v2/models/digits_pipeline')).json()) as Record<string, unknown>;
    assert.deepEqual(metadata, {
      name: 'digits_pipeline',
      versions: ['1'],
      platform: 'ensemble',
      inputs: [{ name: 'IMAGE', datatype: 'UINT8', shape: [-1, 8, 8] }],
      outputs: [
        { name: 'LABEL', datatype: 'BYTES', shape: [-1, 1] },
        { name: 'SCORE', datatype: 'FP32', shape: [-1, 1] },
      ],
    });
    const config = (await (await server.get('/v2/models/digits_pipeline/config')).json()) as Record<string, unknown>;
    assert.equal(config.backend, '');
    assert.deepEqual(config.instance_group, []);
    assert.equal((config.ensemble_scheduling as { step: unknown[] }).step.length, 3);
  });
});
