import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { silentLogger } from '../../src/logging/logger.js';
import { DEFAULT_METRICS_CONFIG } from '../../src/metrics/server-metrics.js';
import { type TestServer, startTestServer } from '../helpers/server.js';

const FAMILY = 'nv_inference_first_response_histogram_ms';

/** Triton's square test model (decoupled), each response 100 ms after the one before. */
const SQUARE = `backend: "square"
max_batch_size: 0
model_transaction_policy { decoupled: true }
input [{ name: "IN" data_type: TYPE_INT32 dims: [ 1 ] }]
output [{ name: "OUT" data_type: TYPE_INT32 dims: [ 1 ] }]
parameters [{ key: "CUSTOM_INFER_DELAY_NS" value: { string_value: "100000000" } }]
`;

/** qa/L0_metrics's bucket override, and a family Triton's core does not let a model customize. */
const BUCKETS = `model_metrics {
  metric_control: [
    { metric_identifier: { family: "nv_inference_first_response_histogram_ms" } histogram_options: { buckets: [ -1, 0.0, 1, 2.5 ] } },
    { metric_identifier: { family: "nv_inference_request_duration_us" } histogram_options: { buckets: [ 1 ] } }
  ]
}
`;

const IDENTITY = `backend: "identity"
max_batch_size: 0
input [{ name: "INPUT0" data_type: TYPE_FP32 dims: [ 1 ] }]
output [{ name: "OUTPUT0" data_type: TYPE_FP32 dims: [ 1 ] }]
`;

/** A decoupled JavaScript model that ends each request with an error and no response before it. */
const FAILS_FIRST = `backend: "javascript"
max_batch_size: 0
model_transaction_policy { decoupled: true }
input [{ name: "X" data_type: TYPE_INT32 dims: [ 1 ] }]
output [{ name: "Y" data_type: TYPE_INT32 dims: [ 1 ] }]
`;
const FAILS_FIRST_CODE = `export default class FailsFirst {
  execute(requests) {
    for (const request of requests) request.responseSender.send(new Error('nothing to say'), { final: true });
  }
}
`;

const MODELS: Record<string, string> = { square: SQUARE, square_buckets: `${SQUARE}${BUCKETS}`, identity: IDENTITY, fails_first: FAILS_FIRST };

/** The sample lines of the family, as `name{labels}` → value (qa/L0_metrics/histogram_metrics_test.py reads them so). */
async function histogramLines(server: TestServer): Promise<Map<string, number>> {
  const text = await (await fetch(`${server.metricsUrl}/metrics`)).text();
  const lines = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (!line.startsWith(FAMILY)) continue;
    const space = line.lastIndexOf(' ');
    lines.set(line.slice(0, space), Number(line.slice(space + 1)));
  }
  return lines;
}

describe('nv_inference_first_response_histogram_ms (--metrics-config histogram_latencies)', () => {
  let repository: string;
  const warnings: string[] = [];
  before(async () => {
    repository = await mkdtemp(join(tmpdir(), 'nereid-first-response-'));
    for (const [name, config] of Object.entries(MODELS)) {
      await mkdir(join(repository, name, '1'), { recursive: true });
      await writeFile(join(repository, name, 'config.pbtxt'), config);
    }
    await writeFile(join(repository, 'fails_first', '1', 'model.js'), FAILS_FIRST_CODE);
  });
  after(() => rm(repository, { recursive: true, force: true }));

  describe('on', () => {
    let server: TestServer;
    before(async () => {
      server = await startTestServer({
        modelRepositories: [repository],
        metricsConfig: { ...DEFAULT_METRICS_CONFIG, histogramLatencies: true },
        logger: { ...silentLogger, warning: (_component, message) => warnings.push(message) },
      });
    });
    after(() => server.close());

    test("each decoupled model version has one, from its load, in Triton's exposition; a model that is not decoupled has none", async () => {
      const lines = await histogramLines(server);
      const series = (model: string, les: readonly string[]): Array<[string, number]> => [
        [`${FAMILY}_count{model="${model}",version="1"}`, 0],
        [`${FAMILY}_sum{model="${model}",version="1"}`, 0],
        ...les.map((le): [string, number] => [`${FAMILY}_bucket{model="${model}",version="1",le="${le}"}`, 0]),
      ];
      assert.deepEqual(
        new Map([...lines].filter(([key]) => key.includes('model="square_buckets"'))),
        new Map(series('square_buckets', ['-1', '0', '1', '2.5', '+Inf'])),
        'model_metrics sets the buckets',
      );
      assert.deepEqual(new Map([...lines].filter(([key]) => key.includes('model="square"'))), new Map(series('square', ['100', '500', '2000', '5000', '+Inf'])));
      assert.deepEqual(
        [...new Set([...lines.keys()].map((key) => /model="(\w+)"/.exec(key)![1]))].sort(),
        ['fails_first', 'square', 'square_buckets'],
        'the identity model, not decoupled, has no series',
      );
      assert.deepEqual(warnings, ["Metric family 'nv_inference_request_duration_us' in 'metric_identifier' is not a customizable metric in Triton core."]);
    });

    test('observes each request once, at its first response, in whole milliseconds from its enqueue', async () => {
      for (let request = 0; request < 2; request++) {
        const response = await server.post('/v2/models/square/generate_stream', { IN: [3] });
        assert.equal(await response.text(), 'data: {"OUT":3,"model_name":"square","model_version":"1"}\n\n'.repeat(3));
      }
      const lines = await histogramLines(server);
      const labels = 'model="square",version="1"';
      const sum = lines.get(`${FAMILY}_sum{${labels}}`)!;
      assert.equal(lines.get(`${FAMILY}_count{${labels}}`), 2, 'one observation per request, not per response');
      assert.equal(Number.isInteger(sum), true, `${sum}`);
      // Each first response waited its 100 ms timer (0.9 of it, as qa/L0_metrics reads it: a timer may fire a little early).
      assert.ok(sum >= 2 * 90, `${sum}`);
      assert.equal(lines.get(`${FAMILY}_bucket{${labels},le="+Inf"}`), 2);
      assert.equal(lines.get(`${FAMILY}_bucket{${labels},le="5000"}`), 2);
    });

    test('a request ended by an error before any response counts it as its first response; one with no response at all does not count', async () => {
      const failed = await server.post('/v2/models/fails_first/generate_stream', { X: 1 });
      assert.equal(await failed.text(), 'data: {"error":"nothing to say"}\n\n');
      const silent = await server.post('/v2/models/square/generate_stream', { IN: [0] });
      assert.equal(await silent.text(), '');
      const lines = await histogramLines(server);
      assert.equal(lines.get(`${FAMILY}_count{model="fails_first",version="1"}`), 1);
      assert.equal(lines.get(`${FAMILY}_count{model="square",version="1"}`), 2, 'IN = 0 sends only the final flag');
    });
  });

  test('off (the default), no model has the family, model_metrics notwithstanding', async () => {
    const server = await startTestServer({ modelRepositories: [repository] });
    try {
      await (await server.post('/v2/models/square/generate_stream', { IN: [1] })).text();
      assert.deepEqual(await histogramLines(server), new Map());
    } finally {
      await server.close();
    }
  });
});
