import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { GrpcClient, HttpClient, type InferenceClient, ServerError } from '../../src/client/index.js';
import { makeDigitsCopies } from '../helpers/model-copies.js';
import { type TestServer, startTestServer } from '../helpers/server.js';

const samples = JSON.parse(readFileSync(new URL('../fixtures/digits_samples.json', import.meta.url), 'utf8')) as { images: number[][]; labels: number[] };
const ENSEMBLES = new URL('../fixtures/ensemble_repository', import.meta.url).pathname;

interface IndexEntry {
  name: string;
  version?: string;
  state: string;
  reason?: string;
}

/** A small seeded generator (mulberry32), so that a failing run can be replayed. */
function randomFrom(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state + 0x6d2b79f5) | 0;
    let t = Math.imul(state ^ (state >>> 15), 1 | state);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const index = async (server: TestServer): Promise<IndexEntry[]> => (await (await server.post('/v2/repository/index', {})).json()) as IndexEntry[];
/** Models holding memory now: READY, or UNLOADING while their accepted requests finish. */
const loadedNames = (entries: readonly IndexEntry[]): string[] => entries.filter((e) => e.state === 'READY' || e.state === 'UNLOADING').map((e) => e.name);
const metricsText = async (server: TestServer): Promise<string> => (await fetch(`${server.metricsUrl}/metrics`)).text();

/** The sum of a metric's samples, or of those whose labels contain `labels`. */
function metricSum(text: string, name: string, labels = ''): number {
  return text
    .split('\n')
    .filter((line) => line.startsWith(`${name}{`) || line.startsWith(`${name} `))
    .filter((line) => line.includes(labels))
    .reduce((sum, line) => sum + Number(line.slice(line.lastIndexOf(' ') + 1)), 0);
}

/** Classifies sample `index % 10` on `model` and checks the digit; returns the error text of a failure. */
async function classify(client: InferenceClient, model: string, index: number): Promise<string | undefined> {
  const sample = index % samples.images.length;
  try {
    const result = await client.infer(model, [{ name: 'INPUT', datatype: 'FP32', shape: [1, 64], data: new Float32Array(samples.images[sample]!) }]);
    const probabilities = [...(result.data('PROBABILITIES', 'FP32') as Float32Array)];
    const digit = probabilities.indexOf(Math.max(...probabilities));
    if (result.modelName !== model) return `${model}: answered by ${result.modelName}`;
    return digit === samples.labels[sample] ? undefined : `${model}: sample ${sample} classified ${digit}, expected ${samples.labels[sample]}`;
  } catch (error) {
    return `${model}: ${(error as Error).message}`;
  }
}

/**
 * `clientCount` clients (half HTTP, half gRPC, through the client library) each send `requestsEach`
 * requests to random models, while the index is sampled; returns the failures and the most models
 * the samples saw loaded.
 */
async function runClients(
  server: TestServer,
  options: { names: readonly string[]; clientCount: number; requestsEach: number; seed: number; sample?: () => Promise<void> },
): Promise<{ failures: string[]; mostLoaded: number }> {
  const clients: InferenceClient[] = Array.from({ length: options.clientCount }, (_, id) => (id % 2 === 0 ? new HttpClient(server.url) : new GrpcClient(server.grpcUrl!)));
  const random = randomFrom(options.seed);
  const failures: string[] = [];
  let mostLoaded = 0;
  let isRunning = true;
  const sampler = (async () => {
    while (isRunning) {
      mostLoaded = Math.max(mostLoaded, loadedNames(await index(server)).length);
      await options.sample?.();
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  })();
  try {
    await Promise.all(
      clients.map(async (client, id) => {
        for (let i = 0; i < options.requestsEach; i++) {
          const failure = await classify(client, options.names[Math.floor(random() * options.names.length)]!, id * 100 + i);
          if (failure !== undefined) failures.push(failure);
        }
      }),
    );
  } finally {
    isRunning = false;
    await sampler;
    await Promise.all(clients.map((client) => client.close()));
  }
  return { failures, mostLoaded };
}

test('200 models with --load-on-demand --max-loaded-models 20: every answer right, never more than 20 loaded, evictions counted', async (t) => {
  const copies = makeDigitsCopies(200);
  // --exit-on-error: the models not loaded at start-up are no failures.
  const server = await startTestServer({ modelRepositories: [copies.dir], isLoadOnDemand: true, maxLoadedModels: 20, isExitOnError: true });
  t.after(async () => {
    await server.close();
    copies.remove();
  });
  assert.deepEqual(loadedNames(await index(server)), [], 'with loading on demand, mode NONE loads nothing at start-up');
  assert.equal((await index(server)).length, 200);
  assert.equal((await server.get('/v2/health/ready')).status, 200, 'models not loaded do not keep the server from being ready: it serves them');

  const { failures, mostLoaded } = await runClients(server, { names: copies.names, clientCount: 8, requestsEach: 12, seed: 19 });
  assert.deepEqual(failures, []);
  assert.ok(mostLoaded <= 20, `the index showed ${mostLoaded} models loaded`);
  const entries = await index(server);
  assert.equal(loadedNames(entries).length, 20, 'more than 20 models were asked for: 20 stay loaded');
  assert.equal((await server.get('/v2/health/ready')).status, 200);
  const evicted = entries.filter((entry) => entry.reason === 'unloaded to stay within --max-loaded-models 20 (least recently used)');
  assert.ok(evicted.length > 0, 'evicted models are listed with the reason');
  assert.ok(evicted.every((entry) => entry.state === 'UNAVAILABLE' && entry.version === '1'));

  const text = await metricsText(server);
  assert.equal(metricSum(text, 'nereid_loaded_models'), 20);
  const evictions = metricSum(text, 'nereid_model_evictions_total');
  const loads = metricSum(text, 'nereid_model_loads_total', 'reason="on_demand"');
  assert.ok(evictions >= evicted.length, `${evictions} evictions counted, ${evicted.length} models listed as evicted`);
  assert.equal(loads, evictions + 20, 'every load on demand is either still loaded or was evicted');
  assert.equal(metricSum(text, 'nereid_model_memory_bytes'), 20 * metricSum(text, 'nereid_model_memory_bytes', `model="${loadedNames(entries)[0]}"`));
  const check = spawnSync('promtool', ['check', 'metrics'], { input: text, encoding: 'utf8' });
  assert.equal(check.error, undefined, 'promtool is needed: apt-get install prometheus (.ci/run installs it)');
  const problems = `${check.stdout}${check.stderr}`.split('\n').filter((line) => line.includes('nereid_model') || line.includes('nereid_loaded'));
  assert.ok(check.status === 0 || check.status === 3, `promtool exit ${check.status}: ${check.stdout}${check.stderr}`);
  assert.deepEqual(problems, [], 'the new metrics pass promtool without lint complaints');
});

test('--model-memory-budget: the estimated memory of the loaded models never passes the budget', async (t) => {
  const copies = makeDigitsCopies(30);
  // Each copy is estimated at one instance's overhead (1 MiB) plus 1.25 × its 10 KB: six fit in 6,656 KB.
  const budgetBytes = 6656 * 2 ** 10;
  const server = await startTestServer({ modelRepositories: [copies.dir], isLoadOnDemand: true, modelMemoryBudgetBytes: budgetBytes });
  t.after(async () => {
    await server.close();
    copies.remove();
  });
  let mostBytes = 0;
  const { failures, mostLoaded } = await runClients(server, {
    names: copies.names,
    clientCount: 4,
    requestsEach: 10,
    seed: 7,
    sample: async () => {
      mostBytes = Math.max(mostBytes, metricSum(await metricsText(server), 'nereid_model_memory_bytes'));
    },
  });
  assert.deepEqual(failures, []);
  assert.ok(mostBytes <= budgetBytes, `the metrics showed ${mostBytes} bytes`);
  assert.ok(mostLoaded <= 6, `the index showed ${mostLoaded} models loaded`);
  const entries = await index(server);
  assert.equal(loadedNames(entries).length, 6);
  assert.ok(entries.some((entry) => entry.reason === 'unloaded to stay within --model-memory-budget 6656KB (least recently used)'));
  assert.ok(metricSum(await metricsText(server), 'nereid_model_evictions_total') > 0);
});

test('concurrent requests for a model not loaded wait for one load; a failed load answers each with its reason', async (t) => {
  const copies = makeDigitsCopies(2);
  cpSync(join(copies.dir, 'digits_1'), join(copies.dir, 'broken'), { recursive: true });
  writeFileSync(join(copies.dir, 'broken', 'config.pbtxt'), 'name: "broken"\nplatform: "onnxruntime_onnx"\nmax_batch_size: "eight"\n');
  const server = await startTestServer({ modelRepositories: [copies.dir], isLoadOnDemand: true });
  t.after(async () => {
    await server.close();
    copies.remove();
  });
  const http = new HttpClient(server.url);
  const grpc = new GrpcClient(server.grpcUrl!);
  t.after(() => Promise.all([http.close(), grpc.close()]));
  const answers = await Promise.all(Array.from({ length: 6 }, (_, i) => classify(i % 2 === 0 ? http : grpc, 'digits_0', i)));
  assert.deepEqual(answers, Array(6).fill(undefined));
  assert.equal(metricSum(await metricsText(server), 'nereid_model_loads_total', 'model="digits_0"'), 1, 'one load served all six');

  const errors = await Promise.all(
    Array.from({ length: 4 }, (_, i) =>
      (i % 2 === 0 ? http : grpc).infer('broken', [{ name: 'INPUT', datatype: 'FP32', shape: [1, 64], data: new Float32Array(64) }]).then(
        () => undefined,
        (error: unknown) => error,
      ),
    ),
  );
  for (const error of errors) {
    assert.ok(error instanceof ServerError, String(error));
    assert.equal(error.status, 'INVALID_ARG');
    assert.match(error.message, /^load failed for model 'broken': .*max_batch_size/);
  }
  const broken = (await index(server)).find((entry) => entry.name === 'broken')!;
  assert.equal(broken.state, 'UNAVAILABLE');
  assert.match(broken.reason!, /max_batch_size/);
  // Once the config is mended, a request after the retry backoff (1 s) loads the model and is served.
  writeFileSync(join(copies.dir, 'broken', 'config.pbtxt'), readFileSync(join(copies.dir, 'digits_1', 'config.pbtxt'), 'utf8').replace('"digits_1"', '"broken"'));
  let failure = await classify(http, 'broken', 0);
  for (let attempt = 0; failure !== undefined && attempt < 50; attempt++) {
    assert.match(failure, /max_batch_size/, "until then, each request gets the failed load's reason");
    await new Promise((resolve) => setTimeout(resolve, 100));
    failure = await classify(http, 'broken', 0);
  }
  assert.equal(failure, undefined, 'the mended model serves');
  // Metadata and config load on demand too (tritonclient asks for the metadata before it infers).
  const metadata = (await (await server.get('/v2/models/digits_1')).json()) as { name: string; versions: string[] };
  assert.deepEqual([metadata.name, metadata.versions], ['digits_1', ['1']]);
  assert.equal((await server.get('/v2/models/digits_1/ready')).status, 200);
  assert.equal((await server.get('/v2/models/no_such_model/config')).status, 400, 'a model in no repository is still unknown');
});

test('EXPLICIT mode with both flags: --load-model and API loads are kept, load/unload/reload keep working, and a load with nothing to evict is refused', async (t) => {
  const copies = makeDigitsCopies(6);
  const server = await startTestServer({
    modelRepositories: [copies.dir],
    modelControlMode: 'explicit',
    startupModels: ['digits_0'],
    isLoadOnDemand: true,
    maxLoadedModels: 3,
    modelMemoryBudgetBytes: 2 ** 30,
  });
  t.after(async () => {
    await server.close();
    copies.remove();
  });
  const http = new HttpClient(server.url);
  t.after(() => http.close());
  const control = async (path: string): Promise<number> => (await server.post(path, {})).status;
  const ready = async (): Promise<string[]> => loadedNames(await index(server)).sort();

  for (const name of ['digits_1', 'digits_2', 'digits_3', 'digits_4']) assert.equal(await classify(http, name, 1), undefined);
  assert.deepEqual(await ready(), ['digits_0', 'digits_3', 'digits_4'], '--load-model digits_0 stays; the least recently used on-demand ones went');
  assert.equal(await control('/v2/repository/models/digits_5/load'), 200);
  assert.deepEqual(await ready(), ['digits_0', 'digits_4', 'digits_5'], 'an API load makes room by evicting too');
  assert.equal(await control('/v2/repository/models/digits_5/load'), 200, 'a load of a loaded model needs no room (unchanged, it is not even loaded again)');
  assert.equal(await control('/v2/repository/models/digits_1/load'), 200);
  assert.deepEqual(await ready(), ['digits_0', 'digits_1', 'digits_5']);

  // Every loaded model is now kept: a request for another is refused with the reason.
  const refusal = await server.post('/v2/models/digits_2/infer', { inputs: [{ name: 'INPUT', shape: [1, 64], datatype: 'FP32', data: samples.images[0] }] });
  assert.equal(refusal.status, 503);
  assert.match(((await refusal.json()) as { error: string }).error, /^load failed for model 'digits_2': loading it would pass --max-loaded-models 3 \(3 models loaded or loading, 3\.0MB estimated in use\) and no loaded model can be unloaded to make room/);
  assert.equal(await control('/v2/repository/models/digits_6/load'), 400, 'a model in no repository');

  assert.equal(await control('/v2/repository/models/digits_1/unload'), 200);
  assert.equal(await classify(http, 'digits_2', 2), undefined, 'once an API model is unloaded there is room again');
  assert.deepEqual(await ready(), ['digits_0', 'digits_2', 'digits_5']);
  const text = await metricsText(server);
  assert.equal(metricSum(text, 'nereid_model_loads_total', 'reason="startup"'), 1);
  assert.equal(metricSum(text, 'nereid_model_loads_total', 'reason="api"'), 2, 'digits_5 and digits_1: the second load of digits_5 found it unchanged');
});

test('POLL mode with loading on demand: nothing loads at start-up; changed models reload, new ones load when asked, removed ones go', async (t) => {
  const copies = makeDigitsCopies(3);
  const server = await startTestServer({ modelRepositories: [copies.dir], modelControlMode: 'poll', repositoryPollMs: 1000, isLoadOnDemand: true, maxLoadedModels: 2 });
  t.after(async () => {
    await server.close();
    copies.remove();
  });
  const http = new HttpClient(server.url);
  t.after(() => http.close());
  const eventually = async (what: string, check: () => Promise<boolean>): Promise<void> => {
    for (let attempt = 0; attempt < 100; attempt++) {
      if (await check()) return;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    assert.fail(`still not true after 10 s: ${what}`);
  };
  assert.deepEqual(loadedNames(await index(server)), []);
  assert.equal(await classify(http, 'digits_0', 0), undefined);
  assert.equal(await classify(http, 'digits_1', 1), undefined);

  // A change to a loaded model reloads it; it still serves, and counts once.
  const config = join(copies.dir, 'digits_0', 'config.pbtxt');
  writeFileSync(config, readFileSync(config, 'utf8').replace('max_batch_size: 32', 'max_batch_size: 16'));
  await eventually('digits_0 reloaded', async () => ((await (await server.get('/v2/models/digits_0/config')).json()) as { max_batch_size: number }).max_batch_size === 16);
  assert.equal(metricSum(await metricsText(server), 'nereid_model_loads_total', 'reason="poll"'), 1);

  // A new folder is listed, not loaded, until a request asks for it; it takes an evicted model's place.
  cpSync(join(copies.dir, 'digits_2'), join(copies.dir, 'digits_new'), { recursive: true });
  const newConfig = join(copies.dir, 'digits_new', 'config.pbtxt');
  writeFileSync(newConfig, readFileSync(newConfig, 'utf8').replace('name: "digits_2"', 'name: "digits_new"'));
  await eventually('digits_new listed', async () => (await index(server)).some((entry) => entry.name === 'digits_new'));
  assert.deepEqual(loadedNames(await index(server)).sort(), ['digits_0', 'digits_1']);
  assert.equal(await classify(http, 'digits_new', 3), undefined);
  assert.deepEqual(loadedNames(await index(server)).sort(), ['digits_0', 'digits_new'], 'digits_0, reloaded by the poll, is still evictable: it was loaded on demand');

  rmSync(join(copies.dir, 'digits_new'), { recursive: true });
  await eventually('digits_new gone', async () => !(await index(server)).some((entry) => entry.name === 'digits_new'));
  assert.equal(await classify(http, 'digits_2', 4), undefined);
  assert.equal(await classify(http, 'digits_1', 5), undefined);
  assert.deepEqual(loadedNames(await index(server)).sort(), ['digits_1', 'digits_2']);
});

test("an ensemble loaded on demand loads its step's model on demand; the step is unloaded only with the ensemble", async (t) => {
  const repository = mkdtempSync(join(tmpdir(), 'nereid-ensemble-demand-'));
  for (const name of ['ens_ok', 'plus_one', 'pair']) cpSync(join(ENSEMBLES, name), join(repository, name), { recursive: true });
  const server = await startTestServer({ modelRepositories: [repository], isLoadOnDemand: true, maxLoadedModels: 2 });
  t.after(async () => {
    await server.close();
    rmSync(repository, { recursive: true, force: true });
  });
  const infer = async (model: string): Promise<{ status: number; body: { outputs?: Array<{ data: number[] }>; error?: string } }> => {
    const response = await server.post(`/v2/models/${model}/infer`, { inputs: [{ name: 'X', shape: [1, 4], datatype: 'FP32', data: [1, 2, 3, 4] }] });
    return { status: response.status, body: (await response.json()) as { outputs?: Array<{ data: number[] }>; error?: string } };
  };
  const ens = await infer('ens_ok');
  assert.deepEqual([ens.status, ens.body.outputs?.[0]?.data], [200, [2, 3, 4, 5]], JSON.stringify(ens.body));
  assert.deepEqual(loadedNames(await index(server)).sort(), ['ens_ok', 'plus_one']);
  // plus_one is the least recently used, but ens_ok needs it: ens_ok goes first.
  const input = (name: string): unknown => ({ name, shape: [1, 4], datatype: 'FP32', data: [1, 2, 3, 4] });
  const pair = await server.post('/v2/models/pair/infer', { inputs: [input('A'), input('B')] });
  assert.deepEqual(((await pair.json()) as { outputs: Array<{ data: number[] }> }).outputs[0]!.data, [2, 4, 6, 8]);
  const entries = await index(server);
  assert.equal(entries.find((entry) => entry.name === 'plus_one')!.state, 'READY');
  assert.equal(entries.find((entry) => entry.name === 'ens_ok')!.reason, 'unloaded to stay within --max-loaded-models 2 (least recently used)');
  const again = await infer('ens_ok');
  assert.deepEqual([again.status, again.body.outputs?.[0]?.data], [200, [2, 3, 4, 5]], JSON.stringify(again.body));
  assert.ok(loadedNames(await index(server)).length <= 2);
});

test('a JavaScript model calling models loads the models it calls on demand', async (t) => {
  const repository = mkdtempSync(join(tmpdir(), 'nereid-bls-demand-'));
  const examples = new URL('../../examples/model_repository/', import.meta.url).pathname;
  for (const name of ['digits_bls', 'digits_preprocess', 'digits', 'digits_postprocess']) cpSync(join(examples, name), join(repository, name), { recursive: true });
  const server = await startTestServer({ modelRepositories: [repository], isLoadOnDemand: true, maxLoadedModels: 4 });
  t.after(async () => {
    await server.close();
    rmSync(repository, { recursive: true, force: true });
  });
  const labels = readFileSync(join(examples, 'digits', 'labels.txt'), 'utf8').split('\n');
  const image = samples.images[3]!.map((value) => Math.round((value * 255) / 16));
  const response = await server.post('/v2/models/digits_bls/infer', { inputs: [{ name: 'IMAGE', datatype: 'UINT8', shape: [1, 8, 8], data: image }] });
  const body = (await response.json()) as { outputs?: Array<{ name: string; data: unknown[] }>; error?: string };
  assert.equal(response.status, 200, body.error);
  assert.deepEqual(body.outputs![0]!.data, [labels[samples.labels[3]!]]);
  assert.deepEqual(loadedNames(await index(server)).sort(), ['digits', 'digits_bls', 'digits_postprocess', 'digits_preprocess']);
  assert.equal(metricSum(await metricsText(server), 'nereid_model_loads_total', 'reason="on_demand"'), 4);
});
