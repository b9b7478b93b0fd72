import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { type TestServer, startTestServer } from '../helpers/server.js';

const JS_REPOSITORY = fileURLToPath(new URL('../fixtures/js_repository', import.meta.url));

// Triton's QA sets TRITONSERVER_DELAY_SCHEDULER to make its batches full (qa/L0_batcher, qa/L0_rate_limiter).
let server: TestServer;
before(async () => {
  process.env.TRITONSERVER_DELAY_SCHEDULER = '6';
  try {
    server = await startTestServer({ modelRepositories: [JS_REPOSITORY], modelControlMode: 'explicit', startupModels: ['js_add'] });
  } finally {
    delete process.env.TRITONSERVER_DELAY_SCHEDULER;
  }
});
after(() => server.close());

const body = (value: number) => ({
  inputs: [
    { name: 'INPUT0', shape: [1, 4], datatype: 'FP32', data: [value, value, value, value] },
    { name: 'INPUT1', shape: [1, 4], datatype: 'FP32', data: [1, 1, 1, 1] },
  ],
});

test('TRITONSERVER_DELAY_SCHEDULER=6: six requests sent one by one to a model with queue delay 0 run as one batch of six, each answered with its own data', async () => {
  const answers = [];
  for (let value = 0; value < 6; value++) {
    answers.push(server.post('/v2/models/js_add/infer', body(value * 10)).then((response) => response.json() as Promise<{ outputs: Array<{ name: string; data: number[] }> }>));
    // Each request reaches the batcher before the next is sent: without the delay, the first would leave alone.
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  const outputs = (await Promise.all(answers)).map((answer) => answer.outputs.find((output) => output.name === 'OUTPUT0')!.data);
  assert.deepEqual(outputs, [0, 10, 20, 30, 40, 50].map((value) => [value + 1, value + 1, value + 1, value + 1]));
  const stats = (await (await server.get('/v2/models/js_add/stats')).json()) as {
    model_stats: Array<{ inference_count: number; execution_count: number; batch_stats: Array<{ batch_size: number; compute_infer: { count: number } }> }>;
  };
  const [model] = stats.model_stats;
  assert.equal(model!.inference_count, 6);
  assert.equal(model!.execution_count, 1);
  assert.deepEqual(
    model!.batch_stats.map((batch) => [batch.batch_size, batch.compute_infer.count]),
    [[6, 1]],
  );
});
