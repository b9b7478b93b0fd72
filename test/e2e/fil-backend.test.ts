/**
 * The fil backend end to end: every model of test/fixtures/fil_repository (every model_type, every
 * XGBoost objective, LightGBM, scikit-learn conversions, SHAP) answers what its own library predicts,
 * over HTTP and gRPC, in one batched request and one row per request (which the dynamic batcher
 * gathers again); files and configs that disagree fail their load with a reason naming both.
 * The predictions are checked twice: with the native evaluator (native/fil) and with the JavaScript
 * one that replaces it when the addon is not built (NEREID_FIL_FALLBACK=1).
 */
import assert from 'node:assert/strict';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { GrpcClient, HttpClient } from '../../src/client/index.js';
import type { Logger } from '../../src/logging/logger.js';
import { EXAMPLES, type TestServer, startTestServer } from '../helpers/server.js';
import { TREE_MODELS, TREE_REPOSITORY, assertClose, rowsAsFloat32, treeExpectation } from '../helpers/tree-fixtures.js';

type Client = HttpClient | GrpcClient;

const infer = async (client: Client, model: string, rows: Float32Array, count: number, features: number) => {
  const result = await client.infer(model, [{ name: 'input__0', datatype: 'FP32', shape: [count, features], data: rows }]);
  return Object.fromEntries(result.outputs.map((output) => [output.name, result.data(output.name, 'FP32') as Float32Array]));
};

/** Batches big enough for the threads (native) or the row pool (JavaScript), checked row by row. */
async function assertLargeBatches(client: Client): Promise<void> {
  for (const [model, copies] of [['xgb_shap_binary', 250], ['xgb_many_trees', 10], ['lgb_multiclass', 300]] as const) {
    const expected = treeExpectation(model);
    const rows = Array.from({ length: copies }, () => expected.rows).flat();
    const outputs = await infer(client, model, rowsAsFloat32(rows), rows.length, expected.rows[0]!.length);
    for (const [name, values] of Object.entries(expected.outputs)) {
      assertClose(outputs[name]!, Array.from({ length: copies }, () => values).flat(), `${model} ${name} (${rows.length} rows)`);
    }
  }
}

/** Starts a server with every fixture model, recording what the fil backend logs; env NEREID_FIL_FALLBACK as given while the models load. */
async function startFilServer(repositories: readonly string[], fallback: '0' | '1'): Promise<{ server: TestServer; filLines: string[] }> {
  const filLines: string[] = [];
  const logger: Logger = { warning() {}, error() {}, verbose() {}, info: (component, message) => (component === 'fil' ? filLines.push(message) : undefined) };
  const previous = process.env.NEREID_FIL_FALLBACK;
  process.env.NEREID_FIL_FALLBACK = fallback;
  try {
    const server = await startTestServer({ modelRepositories: repositories, modelControlMode: 'explicit', startupModels: [...TREE_MODELS, 'breast_cancer'], logger });
    return { server, filLines };
  } finally {
    if (previous === undefined) delete process.env.NEREID_FIL_FALLBACK;
    else process.env.NEREID_FIL_FALLBACK = previous;
  }
}

describe('fil backend', () => {
  let server: TestServer;
  let filLines: string[];
  let clients: Record<'http' | 'grpc', Client>;
  const scratch = mkdtempSync(join(tmpdir(), 'nereid-fil-'));

  before(async () => {
    ({ server, filLines } = await startFilServer([TREE_REPOSITORY, scratch, EXAMPLES], '0'));
    clients = { http: new HttpClient(server.url), grpc: new GrpcClient(server.grpcUrl!) };
  });
  after(async () => {
    await clients.http.close();
    await clients.grpc.close();
    await server.close();
    rmSync(scratch, { recursive: true, force: true });
  });

  test('the load line names the evaluator: native, as npm install built it', (t) => {
    const line = filLines.find((text) => text.startsWith("model 'breast_cancer': "))!;
    // CI must have the addon (.ci/run builds it); a machine without a compiler skips.
    if (line.includes('the JavaScript evaluator') && !process.env['CI']) return t.skip(line.slice(line.indexOf('because ')));
    assert.match(line, /^model 'breast_cancer': 100 trees, \d+ nodes, 30 features, objective 'binary:logistic' from '.*', evaluated by the native evaluator \((walk|avx512|avx2|baseline)\)$/);
  });

  for (const protocol of ['http', 'grpc'] as const) {
    test(`${protocol}: every model answers its library's predictions, batched and one row per request`, async () => {
      for (const model of TREE_MODELS) {
        const expected = treeExpectation(model);
        const features = expected.rows[0]!.length;
        const batched = await infer(clients[protocol], model, rowsAsFloat32(expected.rows), expected.rows.length, features);
        assert.deepEqual(Object.keys(batched).sort(), Object.keys(expected.outputs).sort(), model);
        for (const [name, values] of Object.entries(expected.outputs)) assertClose(batched[name]!, values, `${model} ${name} (batched)`);
        const single = await Promise.all(expected.rows.map((row) => infer(clients[protocol], model, rowsAsFloat32([row]), 1, features)));
        for (const [name, values] of Object.entries(expected.outputs)) {
          const joined = single.flatMap((outputs) => [...outputs[name]!]);
          assertClose(joined, values, `${model} ${name} (one row per request)`);
        }
      }
    });
  }

  test('a large batch, cut across threads, answers the same as its rows one by one', () => assertLargeBatches(clients.grpc));

  test("the example breast_cancer classifier answers XGBoost's predict_proba", async () => {
    const expected = treeExpectation('breast_cancer');
    for (const client of Object.values(clients)) {
      const outputs = await infer(client, 'breast_cancer', rowsAsFloat32(expected.rows), expected.rows.length, 30);
      assertClose(outputs.output__0!, expected.outputs.output__0!, 'breast_cancer');
    }
  });

  test('metadata: input__0 [-1, features], output__0 [-1, classes] with predict_proba', async () => {
    const metadata = await clients.http.modelMetadata('xgb_multi_softprob');
    assert.deepEqual(
      { inputs: metadata.inputs, outputs: metadata.outputs },
      { inputs: [{ name: 'input__0', datatype: 'FP32', shape: [-1, 6] }], outputs: [{ name: 'output__0', datatype: 'FP32', shape: [-1, 3] }] },
    );
  });

  test('only the requested outputs are computed and returned', async () => {
    const expected = treeExpectation('xgb_shap_binary');
    const result = await clients.http.infer('xgb_shap_binary', [{ name: 'input__0', datatype: 'FP32', shape: [expected.rows.length, 5], data: rowsAsFloat32(expected.rows) }], {
      outputs: [{ name: 'treeshap_output' }],
    });
    assert.deepEqual(result.outputs.map((output) => [output.name, output.shape]), [['treeshap_output', [expected.rows.length, 6]]]);
  });

  /** Copies a fixture model into the scratch repository under `name`, with its config edited. */
  function copyModel(from: string, name: string, editConfig: (text: string) => string = (text) => text): string {
    const folder = join(scratch, name);
    cpSync(join(TREE_REPOSITORY, from), folder, { recursive: true });
    const configPath = join(folder, 'config.pbtxt');
    writeFileSync(configPath, editConfig(readFileSync(configPath, 'utf8').replace(`name: "${from}"`, `name: "${name}"`)));
    return folder;
  }

  const load = async (name: string): Promise<{ status: number; error?: string }> => {
    const response = await server.post(`/v2/repository/models/${name}/load`, '');
    const text = await response.text();
    return { status: response.status, ...(text === '' ? {} : (JSON.parse(text) as { error?: string })) };
  };

  test('a config without inputs, outputs and max_batch_size is completed from the model file', async () => {
    const folder = copyModel('lgb_multiclass', 'auto_completed');
    writeFileSync(join(folder, 'config.pbtxt'), 'backend: "fil"\nparameters [ { key: "model_type", value: { string_value: "lightgbm" } }, { key: "predict_proba", value: { string_value: "true" } } ]\n');
    assert.deepEqual(await load('auto_completed'), { status: 200 });
    const config = (await (await server.get('/v2/models/auto_completed/config')).json()) as { max_batch_size: number; input: unknown[]; output: unknown[] };
    assert.deepEqual(
      { max_batch_size: config.max_batch_size, input: config.input, output: config.output },
      {
        max_batch_size: 4,
        input: [{ name: 'input__0', data_type: 'TYPE_FP32', format: 'FORMAT_NONE', dims: [5], is_shape_tensor: false, allow_ragged_batch: false, optional: false, is_non_linear_format_io: false }],
        output: [{ name: 'output__0', data_type: 'TYPE_FP32', dims: [3], label_filename: '', is_shape_tensor: false, is_non_linear_format_io: false }],
      },
    );
  });

  test('warmup runs at load; the dynamic batcher gathers rows sent one per request into fewer executions', async () => {
    copyModel('xgb_reg_squarederror', 'batched', (text) =>
      text
        .replace('dynamic_batching { }', 'dynamic_batching { max_queue_delay_microseconds: 200000 }')
        .concat('model_warmup [ { name: "rows", batch_size: 4, inputs { key: "input__0", value: { data_type: TYPE_FP32, dims: [ 6 ], random_data: true } } } ]\n'),
    );
    assert.deepEqual(await load('batched'), { status: 200 });
    const expected = treeExpectation('xgb_reg_squarederror');
    const rows = expected.rows.slice(0, 8);
    const answers = await Promise.all(rows.map((row) => infer(clients.http, 'batched', rowsAsFloat32([row]), 1, 6)));
    assertClose(answers.flatMap((outputs) => [...outputs.output__0!]), expected.outputs.output__0!.slice(0, 8), 'batched');
    const stats = (await (await server.get('/v2/models/batched/stats')).json()) as { model_stats: Array<{ inference_count: number; execution_count: number }> };
    assert.equal(stats.model_stats[0]!.inference_count, 8);
    assert.ok(stats.model_stats[0]!.execution_count < 8, `8 rows in ${stats.model_stats[0]!.execution_count} executions`);
  });

  test('GPU-only parameters are accepted; an unknown parameter fails the load with the names it could be', async () => {
    copyModel('xgb_reg_squarederror', 'gpu_parameters', (text) =>
      text.replace('parameters [', 'parameters [\n  { key: "storage_type", value: { string_value: "SPARSE" } },\n  { key: "threads_per_tree", value: { string_value: "4" } },'),
    );
    assert.deepEqual(await load('gpu_parameters'), { status: 200 });
    copyModel('xgb_reg_squarederror', 'typo_parameter', (text) => text.replace('parameters [', 'parameters [\n  { key: "predict_probab", value: { string_value: "true" } },'));
    const refused = await load('typo_parameter');
    assert.equal(refused.status, 400);
    assert.match(refused.error!, /parameter 'predict_probab' is not one the fil backend knows \(did you mean 'predict_proba'\?\)/);
  });

  test('a config that disagrees with the model file fails the load, naming both', async () => {
    copyModel('xgb_reg_squarederror', 'wrong_features', (text) => text.replace('dims: [ 6 ]', 'dims: [ 7 ]'));
    const features = await load('wrong_features');
    assert.equal(features.status, 400);
    assert.match(features.error!, /model 'wrong_features': input 'input__0' has dims \[7\] in the configuration, but the model file '.*xgboost\.json' has 6 features, so \[6\] is expected/);
    copyModel('xgb_multi_softprob', 'wrong_classes', (text) => text.replace('dims: [ 3 ]', 'dims: [ 4 ]'));
    const classes = await load('wrong_classes');
    assert.equal(classes.status, 400);
    assert.match(classes.error!, /model 'wrong_classes': output 'output__0' has dims \[4\] in the configuration, but the model file '.*xgboost\.json' has 3 classes \(predict_proba: one probability per class\), so \[3\] is expected/);
  });

  test('malformed model files fail the load with the reason', async () => {
    const cases: Array<[string, string, Uint8Array | string, RegExp]> = [
      ['xgb_reg_squarederror', 'xgboost.json', '{"learner": {"gradient_booster": ', /model file '.*xgboost\.json' \(model_type 'xgboost_json'\) is not valid JSON/],
      ['xgb_reg_squarederror', 'xgboost.json', '{"learner": {}}', /model file '.*xgboost\.json' \(model_type 'xgboost_json'\) has no 'gradient_booster'/],
      ['xgb_multi_class', 'xgboost.ubj', new Uint8Array([0x7b, 0x4c, 0, 0, 0, 0, 0, 0, 0, 7]), /model file '.*xgboost\.ubj' \(model_type 'xgboost_ubj'\) ends early/],
      ['xgb_many_trees', 'xgboost.model', new Uint8Array(200), /model file '.*xgboost\.model' \(model_type 'xgboost'\) /],
      ['lgb_regression', 'model.txt', 'not a model\n', /model file '.*model\.txt' \(model_type 'lightgbm'\) starts with 'not a model', not 'tree'/],
    ];
    for (const [index, [from, file, content, error]] of cases.entries()) {
      const name = `malformed_${index}`;
      writeFileSync(join(copyModel(from, name), '1', file), content);
      const answer = await load(name);
      assert.equal(answer.status, 400, name);
      assert.match(answer.error!, error, name);
    }
    const truncated = copyModel('xgb_many_trees', 'truncated_binary');
    const bytes = readFileSync(join(truncated, '1', 'xgboost.model'));
    writeFileSync(join(truncated, '1', 'xgboost.model'), bytes.subarray(0, bytes.byteLength / 2));
    assert.match((await load('truncated_binary')).error!, /\(model_type 'xgboost'\) ends early: tree \d+'s/);
  });

  test('a Treelite checkpoint is refused with the reason', async () => {
    const folder = copyModel('xgb_reg_squarederror', 'treelite', (text) => text.replace('string_value: "xgboost_json"', 'string_value: "treelite_checkpoint"'));
    writeFileSync(join(folder, '1', 'checkpoint.tl'), new Uint8Array(64));
    const answer = await load('treelite');
    assert.equal(answer.status, 400);
    assert.match(answer.error!, /\(model_type 'treelite_checkpoint'\) is a Treelite checkpoint, whose binary layout is Treelite's internal memory image/);
  });
});

describe('fil backend with the JavaScript evaluator (NEREID_FIL_FALLBACK=1)', () => {
  let server: TestServer;
  let filLines: string[];
  let client: HttpClient;

  before(async () => {
    ({ server, filLines } = await startFilServer([TREE_REPOSITORY, EXAMPLES], '1'));
    client = new HttpClient(server.url);
  });
  after(async () => {
    await client.close();
    await server.close();
  });

  test("every model answers its library's predictions, in one batch and in batches for the row pool", async () => {
    assert.match(filLines.find((text) => text.startsWith("model 'breast_cancer': "))!, /evaluated by the JavaScript evaluator, because NEREID_FIL_FALLBACK=1$/);
    for (const model of [...TREE_MODELS, 'breast_cancer']) {
      const expected = treeExpectation(model);
      const outputs = await infer(client, model, rowsAsFloat32(expected.rows), expected.rows.length, expected.rows[0]!.length);
      for (const [name, values] of Object.entries(expected.outputs)) assertClose(outputs[name]!, values, `${model} ${name}`);
    }
    await assertLargeBatches(client);
  });
});
