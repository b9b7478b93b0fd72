import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { appendFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { GrpcClient, ServerError } from '../../src/client/index.js';
import { PYTHON_FIXTURES, copyRepository, inferJson, outputData } from '../helpers/python-models.js';
import { type TestServer, startTestServer } from '../helpers/server.js';

const text = (name: string, value: string): { name: string; shape: number[]; datatype: 'BYTES'; data: string[] } => ({ name, shape: [1], datatype: 'BYTES', data: [value] });

describe("Python backend: the rest of Triton's pb_utils (custom metrics, the model loading API, response parameters)", () => {
  let server: TestServer;
  let grpc: GrpcClient;
  const repository = copyRepository([{ from: PYTHON_FIXTURES, models: ['custom_metrics', 'model_loader', 'response_parameters', 'add_sub', 'errors'] }]);
  // response_parameters is cached: its hits must answer with the parameters of the miss they repeat.
  appendFileSync(join(repository.path, 'response_parameters', 'config.pbtxt'), '\nresponse_cache { enable: true }\n');
  before(async () => {
    server = await startTestServer({
      modelRepositories: [repository.path],
      modelControlMode: 'explicit',
      startupModels: ['custom_metrics', 'model_loader', 'response_parameters', 'errors'],
      responseCacheBytes: 1 << 20,
    });
    grpc = new GrpcClient(server.grpcUrl!);
  });
  after(async () => {
    await grpc.close();
    await server.close();
    repository.remove();
  });

  const scrape = async (): Promise<string> => (await fetch(`${server.metricsUrl}/metrics`)).text();
  const customLines = (metrics: string): string[] => metrics.split('\n').filter((line) => /^(# (HELP|TYPE) )?custom_/.test(line));
  const measure = async (value: number, mode = 'count'): Promise<unknown> => {
    const { status, json } = await inferJson(server, 'custom_metrics', { inputs: [{ name: 'VALUE', shape: [1], datatype: 'FP64', data: [value] }, text('MODE', mode)] });
    assert.equal(status, 200, JSON.stringify(json));
    return JSON.parse(outputData(json, 'RESULT')[0] as string);
  };

  test('pb_utils.MetricFamily: a COUNTER, a GAUGE and a HISTOGRAM with labels on /metrics beside nv_*, read back with value(); promtool accepts the page', async () => {
    assert.deepEqual(await measure(0.5), { requests: 1, value: 0.5 });
    assert.deepEqual(await measure(5), { requests: 2, value: 5 });
    assert.deepEqual(await measure(500), { requests: 3, value: 500 });
    const metrics = await scrape();
    const labels = 'model="custom_metrics",version="1"';
    assert.deepEqual(customLines(metrics), [
      '# HELP custom_requests_total Requests this model has seen',
      '# TYPE custom_requests_total counter',
      `custom_requests_total{${labels}} 3`,
      '# HELP custom_last_value The last VALUE',
      '# TYPE custom_last_value gauge',
      `custom_last_value{${labels}} 500`,
      '# HELP custom_value The VALUEs seen',
      '# TYPE custom_value histogram',
      `custom_value_bucket{${labels},le="1"} 1`,
      `custom_value_bucket{${labels},le="10"} 2`,
      `custom_value_bucket{${labels},le="100"} 2`,
      `custom_value_bucket{${labels},le="+Inf"} 3`,
      `custom_value_sum{${labels}} 505.5`,
      `custom_value_count{${labels}} 3`,
    ]);
    assert.match(metrics, /^nv_inference_request_success\{model="custom_metrics",version="1"\} 3$/m);
    // The whole page has only the naming lints of Triton's own nv_* names (metrics.test.ts); the
    // model's families alone pass clean.
    const page = spawnSync('promtool', ['check', 'metrics'], { input: metrics, encoding: 'utf8' });
    assert.ok(page.status === 0 || page.status === 3, page.stdout + page.stderr);
    assert.deepEqual(`${page.stdout}${page.stderr}`.split('\n').filter((line) => line.includes('custom_')), []);
    const custom = spawnSync('promtool', ['check', 'metrics'], { input: `${customLines(metrics).join('\n')}\n`, encoding: 'utf8' });
    assert.equal(custom.status, 0, custom.stdout + custom.stderr);
  });

  test("what Triton refuses of a metric is refused in Triton's words", async () => {
    assert.deepEqual(await measure(1, 'misuse'), [
      'TRITONSERVER_METRIC_KIND_COUNTER can only be incremented monotonically by non-negative values.',
      'TRITONSERVER_METRIC_KIND_COUNTER does not support Set',
      'TRITONSERVER_METRIC_KIND_GAUGE does not support Observe',
      'TRITONSERVER_METRIC_KIND_HISTOGRAM does not support Value',
      'Bucket boundaries not found in Metric args.',
    ]);
  });

  test('pb_utils.load_model, is_model_ready and unload_model make the repository calls of the HTTP API', async () => {
    const control = async (action: string, name: string, config = ''): Promise<{ ready: unknown; error: unknown }> => {
      const { status, json } = await inferJson(server, 'model_loader', { inputs: [text('ACTION', action), text('NAME', name), text('CONFIG', config)] });
      assert.equal(status, 200, JSON.stringify(json));
      return { ready: outputData(json, 'READY')[0], error: outputData(json, 'ERROR')[0] };
    };
    assert.deepEqual(await control('ready', 'add_sub'), { ready: false, error: '' });
    assert.deepEqual(await control('load', 'add_sub'), { ready: true, error: '' });
    assert.equal((await server.get('/v2/models/add_sub/ready')).status, 200);
    assert.deepEqual(await control('unload', 'add_sub'), { ready: false, error: '' });
    assert.equal((await server.get('/v2/models/add_sub/ready')).status, 400);
    const config = JSON.stringify({ backend: 'python', max_batch_size: 8, input: [{ name: 'INPUT0', data_type: 'TYPE_INT32', dims: [16] }, { name: 'INPUT1', data_type: 'TYPE_INT32', dims: [16] }], output: [{ name: 'OUTPUT0', data_type: 'TYPE_INT32', dims: [16] }, { name: 'OUTPUT1', data_type: 'TYPE_INT32', dims: [16] }] });
    assert.deepEqual(await control('load', 'add_sub', config), { ready: true, error: '' });
    const loaded = (await (await server.get('/v2/models/add_sub/config')).json()) as { max_batch_size: number; instance_group: unknown[] };
    assert.equal(loaded.max_batch_size, 8);
    const missing = await control('load', 'no_such_model');
    assert.equal(missing.ready, false);
    assert.match(missing.error as string, /no_such_model/);
  });

  test('response parameters reach HTTP and gRPC clients; request parameters reach the model as Triton\'s JSON string', async () => {
    const { status, json } = await inferJson(server, 'response_parameters', {
      parameters: { mode: 'fast', count: 3, strict: true, priority: 1 },
      inputs: [{ name: 'IN', shape: [1], datatype: 'INT32', data: [1] }],
    });
    assert.equal(status, 200, JSON.stringify(json));
    assert.equal(outputData(json, 'PARAMETERS')[0], '{"mode":"fast","count":3,"strict":true}');
    assert.deepEqual((json as unknown as { parameters: unknown }).parameters, { mode: 'fast', count: 3, strict: true, answered_by: 'response_parameters' });
    const result = await grpc.infer('response_parameters', [{ name: 'IN', shape: [1], datatype: 'INT32', data: [1] }], { parameters: { mode: 'grpc' } });
    assert.deepEqual(result.parameters, { mode: 'grpc', answered_by: 'response_parameters' });
  });

  test('a cache hit answers with the response parameters the model set, over HTTP and gRPC', async () => {
    const cacheCounts = async (): Promise<number[]> => {
      const stats = (await (await server.get('/v2/models/response_parameters/stats')).json()) as {
        model_stats: Array<{ inference_stats: Record<'cache_hit' | 'cache_miss', { count: number }> }>;
      };
      const { cache_hit, cache_miss } = stats.model_stats[0]!.inference_stats;
      return [cache_hit.count, cache_miss.count];
    };
    const [hitsBefore, missesBefore] = await cacheCounts();
    const body = { parameters: { mode: 'cached' }, inputs: [{ name: 'IN', shape: [1], datatype: 'INT32', data: [2] }] };
    for (let i = 0; i < 3; i++) {
      const { status, json } = await inferJson(server, 'response_parameters', body);
      assert.equal(status, 200, JSON.stringify(json));
      assert.deepEqual((json as unknown as { parameters: unknown }).parameters, { mode: 'cached', answered_by: 'response_parameters' });
    }
    const result = await grpc.infer('response_parameters', [{ name: 'IN', shape: [1], datatype: 'INT32', data: [2] }], { parameters: { mode: 'cached' } });
    assert.deepEqual(result.parameters, { mode: 'cached', answered_by: 'response_parameters' });
    assert.deepEqual(await cacheCounts(), [hitsBefore! + 3, missesBefore! + 1]);
  });

  test("a model's error on a gRPC stream is the response's error_message; with triton_grpc_error it ends the stream with its gRPC status", async () => {
    const mode = (value: string) => [text('MODE', value)];
    const plain = grpc.stream();
    plain.send('errors', mode('invalid'), { id: 'bad' });
    plain.send('errors', mode('ok'), { id: 'good' });
    plain.end();
    const answers: Array<{ id: string; error: string | undefined; isServerError: boolean }> = [];
    for await (const answer of plain) answers.push({ id: answer.id, error: answer.error?.message, isServerError: answer.error instanceof ServerError });
    assert.deepEqual(answers.sort((a, b) => (a.id < b.id ? -1 : 1)), [
      { id: 'bad', error: 'mode invalid was asked for', isServerError: true },
      { id: 'good', error: undefined, isServerError: false },
    ]);
    const strict = new GrpcClient(server.grpcUrl!, { metadata: { triton_grpc_error: 'true' } });
    try {
      const stream = strict.stream();
      stream.send('errors', mode('ok'), { id: 'first' });
      const seen: string[] = [];
      const ended = (async () => {
        for await (const answer of stream) {
          seen.push(answer.id ?? '');
          if (seen.length === 1) stream.send('errors', mode('unavailable'), { id: 'second' });
        }
      })();
      await assert.rejects(ended, (error: unknown) => {
        assert.ok(error instanceof ServerError, String(error));
        assert.equal(error.message, 'mode unavailable was asked for');
        assert.deepEqual(error.transport, { protocol: 'grpc', grpcCode: 14 });
        return true;
      });
      assert.deepEqual(seen, ['first']);
    } finally {
      await strict.close();
    }
    // As in Triton: each failed request counts for its model (reason BACKEND); a request to a model
    // that does not exist fails before any model's statistics, so it counts nowhere.
    const unknown = await inferJson(server, 'no_such_model', { inputs: [] });
    assert.equal(unknown.status, 400);
    const metrics = await scrape();
    assert.match(metrics, /^nv_inference_request_failure\{model="errors",version="1",reason="BACKEND"\} 2$/m);
    assert.doesNotMatch(metrics, /no_such_model/);
  });

  test('custom metrics leave /metrics when their model unloads', async () => {
    assert.equal((await server.post('/v2/repository/models/custom_metrics/unload', {})).status, 200);
    while ((await server.get('/v2/models/custom_metrics/ready')).status === 200) await new Promise((resolve) => setTimeout(resolve, 20));
    let lines = customLines(await scrape());
    for (let attempt = 0; lines.length > 0 && attempt < 100; attempt++) {
      await new Promise((resolve) => setTimeout(resolve, 20));
      lines = customLines(await scrape());
    }
    assert.deepEqual(lines, []);
  });
});

describe('Python backend: the model loading API where the control mode forbids it', () => {
  let server: TestServer;
  const repository = copyRepository([{ from: PYTHON_FIXTURES, models: ['model_loader', 'add_sub'] }]);
  before(async () => {
    server = await startTestServer({ modelRepositories: [repository.path], modelControlMode: 'none' });
  });
  after(async () => {
    await server.close();
    repository.remove();
  });

  test("pb_utils.load_model is refused with Triton's message, as the HTTP API is", async () => {
    const { json } = await inferJson(server, 'model_loader', { inputs: [text('ACTION', 'unload'), text('NAME', 'add_sub'), text('CONFIG', '')] });
    const http = (await (await server.post('/v2/repository/models/add_sub/unload', {})).json()) as { error: string };
    assert.equal(outputData(json, 'ERROR')[0], http.error);
    assert.match(http.error, /^explicit model load \/ unload is not allowed if polling is enabled/);
    assert.equal(outputData(json, 'READY')[0], true);
  });
});
