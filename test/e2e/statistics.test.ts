import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { EXAMPLES, FIXTURES, type TestServer, startTestServer } from '../helpers/server.js';

interface DurationJson {
  count: number;
  ns: number;
}
interface ModelStatJson {
  name: string;
  version: string;
  last_inference: number;
  inference_count: number;
  execution_count: number;
  inference_stats: Record<'success' | 'fail' | 'queue' | 'compute_input' | 'compute_infer' | 'compute_output' | 'cache_hit' | 'cache_miss', DurationJson>;
  batch_stats: Array<{ batch_size: number; compute_input: DurationJson; compute_infer: DurationJson; compute_output: DurationJson }>;
}

async function stats(server: TestServer, path: string): Promise<ModelStatJson[]> {
  const response = await server.get(path);
  assert.equal(response.status, 200, await response.clone().text());
  return ((await response.json()) as { model_stats: ModelStatJson[] }).model_stats;
}

describe('dynamic batching and the statistics extension', () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer({ modelRepositories: [FIXTURES, EXAMPLES], isStrictReadiness: false });
  });
  after(() => server.close());

  test('concurrent requests are batched, each gets its own answer, and the counts add up', async () => {
    const sizes = [1, 2, 1, 3, 1, 1, 2, 1, 1, 1, 2, 1];
    const responses = await Promise.all(
      sizes.map(async (batch, i) => {
        const data = Array.from({ length: batch * 4 }, (_, k) => i * 100 + k);
        const response = await server.post('/v2/models/batching/infer', {
          id: `r${i}`,
          inputs: [{ name: 'INPUT0', shape: [batch, 4], datatype: 'FP32', data }],
        });
        assert.equal(response.status, 200);
        const body = (await response.json()) as { id: string; outputs: Array<{ shape: number[]; data: number[] }> };
        return { i, data, body };
      }),
    );
    for (const { i, data, body } of responses) {
      assert.equal(body.id, `r${i}`);
      assert.deepEqual(body.outputs[0]!.shape, [sizes[i], 4]);
      assert.deepEqual(body.outputs[0]!.data, data.map((v) => v * 2));
    }
    const [model] = await stats(server, '/v2/models/batching/stats');
    const inferences = sizes.reduce((a, b) => a + b, 0);
    assert.equal(model!.name, 'batching');
    assert.equal(model!.version, '1');
    assert.equal(model!.inference_count, inferences);
    assert.equal(model!.inference_stats.success.count, sizes.length);
    assert.equal(model!.inference_stats.fail.count, 0);
    assert.equal(model!.inference_stats.queue.count, sizes.length);
    assert.equal(model!.inference_stats.compute_infer.count, sizes.length);
    const executions = model!.batch_stats.reduce((sum, b) => sum + b.compute_infer.count, 0);
    assert.equal(model!.execution_count, executions);
    assert.ok(executions < sizes.length, `${executions} executions for ${sizes.length} requests: batching happened`);
    assert.ok(model!.batch_stats.some((b) => b.batch_size > 1));
    assert.equal(model!.batch_stats.reduce((sum, b) => sum + b.batch_size * b.compute_infer.count, 0), inferences);
    assert.ok(model!.batch_stats.every((b) => b.batch_size <= 8));
    assert.ok(model!.inference_stats.success.ns >= model!.inference_stats.queue.ns);
    assert.ok(model!.last_inference > Date.now() - 60_000 && model!.last_inference <= Date.now());
  });

  test('without batching each request is one execution of its own batch size', async () => {
    const request = (value: number) => ({
      inputs: [
        { name: 'INPUT0', shape: [2, 16], datatype: 'INT32', data: Array(32).fill(value) },
        { name: 'INPUT1', shape: [2, 16], datatype: 'INT32', data: Array(32).fill(1) },
      ],
    });
    for (let i = 0; i < 3; i++) assert.equal((await server.post('/v2/models/simple/infer', request(i))).status, 200);
    const [simple] = await stats(server, '/v2/models/simple/versions/1/stats');
    assert.equal(simple!.inference_count, 6);
    assert.equal(simple!.execution_count, 3);
    assert.deepEqual(simple!.batch_stats.map((b) => [b.batch_size, b.compute_infer.count]), [[2, 3]]);
    assert.deepEqual(simple!.inference_stats.cache_hit, { count: 0, ns: 0 });
  });

  test('all models, all versions of one model, and unknown names', async () => {
    const all = await stats(server, '/v2/models/stats');
    assert.ok(all.some((s) => s.name === 'simple') && all.some((s) => s.name === 'batching'));
    assert.deepEqual(all.map((s) => s.name), [...all.map((s) => s.name)].sort((a, b) => a.localeCompare(b)));
    const versions = await stats(server, '/v2/models/versioned/stats');
    assert.deepEqual(versions.map((s) => s.version), ['1', '3']);
    // Triton's errors (core tritonserver.cc TRITONSERVER_ServerModelStatistics), both 400.
    const unknown = await server.get('/v2/models/nope/stats');
    assert.equal(unknown.status, 400);
    assert.deepEqual(await unknown.json(), { error: "requested model 'nope' is not available" });
    const notReady = await server.get('/v2/models/versioned/versions/2/stats');
    assert.equal(notReady.status, 400);
    assert.deepEqual(await notReady.json(), { error: "requested model version is not available for model 'versioned'" });
    const failed = await server.get('/v2/models/broken_model/stats');
    assert.deepEqual([failed.status, await failed.json()], [400, { error: "requested model 'broken_model' is not available" }]);
  });
});
