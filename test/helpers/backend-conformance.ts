/**
 * The backend conformance suite: one set of cases that every backend passes, run end to end (the
 * real server on port 0, over HTTP) against a repository of the same six models written for that
 * backend (test/fixtures/conformance/<backend>/; the ONNX ones come from
 * scripts/generate_conformance_models.py):
 *
 * - identity:   OUTPUT_<T> = INPUT_<T> for every data type but BF16 (which onnxruntime-node cannot hold)
 * - batching:   BYTES identity behind a batcher that waits for 4 requests; an element holding a NUL byte
 *               fails its own request
 * - reshape:    the model sees INPUT0 [4] as [2, 2] (config `reshape`) and says so in SHAPE
 * - bad_output: identity whose configuration promises OUTPUT0 dims [2]
 * - crashy:     identity; a negative INPUT0 ends the worker where the backend runs model code
 * - slow:       identity that takes a while, one instance
 *
 * A new backend joins with its repository of these models and one test file calling
 * `runBackendConformance` (see test/e2e/conformance-*.test.ts). A backend whose models cannot be
 * some of the six (the fil backend's take FP32 rows of features only) lists them in `unsupported`
 * with the reason, which skips their cases saying so, and brings a `batchProbe`: a model of its own
 * behind the same batcher, on which the batch-split case runs instead.
 *
 * Crash and recovery: a worker is stopped for real in two ways. Every backend's worker is killed while
 * idle through killWorkersForTesting (supervised-instance.ts), the supervised layer's own handle on it:
 * that is the only real way for ONNX Runtime, whose worker thread cannot be stopped while a session
 * runs (stopping it then aborts the whole process, see OrtInstance) and whose graphs cannot exit.
 * Backends that run model code (`crashesOnRequest`) are also crashed by the model itself under a
 * request, which must fail with the instance, the model and the exit code. To watch the instance
 * while it is unhealthy, the model file is broken before the crash, so that every restart fails
 * (and is retried after 1 s, 2 s, …) until the test puts the file back.
 */
import assert from 'node:assert/strict';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, test } from 'node:test';
import { killWorkersForTesting } from '../../src/backends/supervised-instance.js';
import { FIXED_TYPES, STRINGS, VALUES, serializeStrings } from './edge-values.js';
import { type TestServer, binaryBody, binaryOutputs, bytesOf, readInferResponse, startTestServer } from './server.js';

export interface BackendFixture {
  /** The backend's name, for the suite's title. */
  readonly backend: string;
  /** A repository holding the six models above, written for this backend. */
  readonly repository: string;
  /** The file in a version folder that the backend loads the model from (model.onnx, model.js, model.py). */
  readonly modelFile: string;
  /** What runs an instance, as errors name it: 'worker thread', 'Python process'. */
  readonly workerKind: string;
  /** Whether crashy's model code ends its worker (exit code 3) when INPUT0 is negative. */
  readonly crashesOnRequest: boolean;
  /** The error of a request to batching whose first element holds a NUL byte. */
  readonly poisonError: string;
  /** Server options the backend needs for the suite. */
  readonly serverOptions?: Partial<Parameters<typeof startTestServer>[0]>;
  /** The suite's models this backend cannot express, each with the reason; their cases are skipped. */
  readonly unsupported?: Partial<Record<ConformanceModel, string>>;
  /** With `batching` unsupported: the backend's own model behind a batcher that waits for 4 requests. */
  readonly batchProbe?: BatchProbe;
  /**
   * Outputs reach the client as the model returned them, whatever the configuration says (Triton's
   * Python backend), where the others fail the request: why, for the bad_output case.
   */
  readonly outputsAsReturned?: string;
}

export type ConformanceModel = 'identity' | 'batching' | 'reshape' | 'bad_output' | 'crashy' | 'slow';

export interface BatchProbe {
  /** The model's folder name in the fixture's repository. */
  readonly model: string;
  /** The i-th of four requests (an infer request body) and the outputs it must get. */
  request(index: number): unknown;
  outputs(index: number): OutputJson[];
}

const MODELS: readonly ConformanceModel[] = ['identity', 'batching', 'reshape', 'bad_output', 'crashy', 'slow'];

export type OutputJson = { name: string; datatype: string; shape: number[]; data: unknown[] };
type Answer = { status: number; json: { error?: string; outputs?: OutputJson[] } };

const fp32 = (values: number[], shape: number[] = [values.length]) => ({ inputs: [{ name: 'INPUT0', datatype: 'FP32', shape, data: values }] });
const text = (elements: string[]) => ({ inputs: [{ name: 'INPUT0', datatype: 'BYTES', shape: [1, elements.length], data: elements }] });

export function runBackendConformance(fixture: BackendFixture): void {
  const unsupported = fixture.unsupported ?? {};
  const models = [...MODELS.filter((model) => unsupported[model] === undefined), ...(fixture.batchProbe ? [fixture.batchProbe.model] : [])];
  /** Skips a case whose models the backend cannot express, with the first reason. */
  const needs = (...needed: ConformanceModel[]): { skip: string | false } => {
    const reason = needed.map((model) => unsupported[model]).find((text) => text !== undefined);
    return { skip: reason === undefined ? false : `no '${needed.join("', '")}' model: ${reason}` };
  };
  describe(`backend conformance: ${fixture.backend}`, () => {
    let server: TestServer;
    const repository = mkdtempSync(join(tmpdir(), `nereid-conformance-${fixture.backend}-`));
    const infer = async (model: string, body: unknown): Promise<Answer> => {
      const response = await server.post(`/v2/models/${model}/infer`, body);
      return { status: response.status, json: (await response.json()) as Answer['json'] };
    };
    const isReady = async (model: string): Promise<boolean> => (await server.get(`/v2/models/${model}/ready`)).status === 200;
    /** Polls until the model is ready again (the test runner's timeout bounds it). */
    const waitUntilReady = async (model: string): Promise<void> => {
      while (!(await isReady(model))) await sleep(20);
    };
    const statistics = async (model: string): Promise<{ inference_count: number; execution_count: number }> => {
      const json = (await (await server.get(`/v2/models/${model}/stats`)).json()) as { model_stats: Array<{ inference_count: number; execution_count: number }> };
      return json.model_stats[0]!;
    };
    const pendingCount = async (model: string): Promise<number> => {
      const metrics = await (await fetch(`${server.metricsUrl}/metrics`)).text();
      const line = metrics.split('\n').find((candidate) => candidate.startsWith(`nv_inference_pending_request_count{model="${model}",`));
      return Number(line?.split(' ').at(-1) ?? 0);
    };

    before(async () => {
      for (const model of models) cpSync(join(fixture.repository, model), join(repository, model), { recursive: true });
      server = await startTestServer({ ...fixture.serverOptions, modelRepositories: [repository], modelControlMode: 'explicit', startupModels: models });
    });
    after(async () => {
      await server.close();
      rmSync(repository, { recursive: true, force: true });
    });

    test('every data type crosses into the model and back byte for byte', needs('identity'), async () => {
      const strings = serializeStrings(STRINGS);
      const tensors = [...FIXED_TYPES.map((type) => bytesOf(VALUES[type].array)), strings];
      const { body, headers } = binaryBody(
        {
          inputs: [
            ...FIXED_TYPES.map((type, i) => ({ name: `INPUT_${type}`, datatype: type, shape: [1, 3], parameters: { binary_data_size: tensors[i]!.byteLength } })),
            { name: 'INPUT_BYTES', datatype: 'BYTES', shape: [1, 3], parameters: { binary_data_size: strings.byteLength } },
          ],
          parameters: { binary_data_output: true },
        },
        tensors,
      );
      const response = await server.post('/v2/models/identity/infer', body, { headers });
      assert.equal(response.status, 200, await response.clone().text());
      const { json, binary } = await readInferResponse(response);
      const types = [...FIXED_TYPES, 'BYTES'];
      assert.deepEqual(
        json.outputs.map(({ name, datatype, shape }) => ({ name, datatype, shape })),
        types.map((type) => ({ name: `OUTPUT_${type}`, datatype: type, shape: [1, 3] })),
      );
      const byName = binaryOutputs(json, binary);
      types.forEach((type, i) => assert.deepEqual(byName.get(`OUTPUT_${type}`), tensors[i], type));
    });

    test('reshape: the model sees the config reshape, the client the dims', needs('reshape'), async () => {
      assert.deepEqual(await infer('reshape', fp32([1, 2, 3, 4])), {
        status: 200,
        json: {
          model_name: 'reshape',
          model_version: '1',
          outputs: [
            { name: 'OUTPUT0', datatype: 'FP32', shape: [4], data: [1, 2, 3, 4] },
            { name: 'SHAPE', datatype: 'INT64', shape: [2], data: [2, 2] },
          ],
        },
      });
    });

    const probe = fixture.batchProbe;
    if (probe !== undefined) {
      test(`a batch of several requests runs in one execution and is split back to each request (${probe.model})`, async () => {
        const answers = await Promise.all([0, 1, 2, 3].map((index) => infer(probe.model, probe.request(index))));
        assert.deepEqual(
          answers,
          [0, 1, 2, 3].map((index) => ({ status: 200, json: { model_name: probe.model, model_version: '1', outputs: probe.outputs(index) } })),
        );
        assert.deepEqual(await statistics(probe.model), { ...(await statistics(probe.model)), inference_count: 4, execution_count: 1 });
      });
    }

    test('a batch of several requests runs in one execution and is split back to each request', needs('batching'), async () => {
      const elements = ['a', 'bb', 'ccc', 'dddd'].map((element) => [element, `${element}!`]);
      const answers = await Promise.all(elements.map((pair) => infer('batching', text(pair))));
      assert.deepEqual(
        answers,
        elements.map((pair) => ({
          status: 200,
          json: { model_name: 'batching', model_version: '1', outputs: [{ name: 'OUTPUT0', datatype: 'BYTES', shape: [1, 2], data: pair }] },
        })),
      );
      assert.deepEqual(await statistics('batching'), { ...(await statistics('batching')), inference_count: 4, execution_count: 1 });
    });

    test('a request that fails in a batch fails alone; the others of its batch are answered', needs('batching'), async () => {
      const answers = await Promise.all([text(['x', 'y']), text(['poison\u0000', 'y']), text(['z', 'w']), text(['v', 'u'])].map((body) => infer('batching', body)));
      assert.deepEqual(answers[1], { status: 400, json: { error: fixture.poisonError } });
      for (const [index, pair] of [[0, ['x', 'y']], [2, ['z', 'w']], [3, ['v', 'u']]] as const) {
        assert.deepEqual(answers[index], {
          status: 200,
          json: { model_name: 'batching', model_version: '1', outputs: [{ name: 'OUTPUT0', datatype: 'BYTES', shape: [1, 2], data: pair }] },
        });
      }
      assert.equal((await statistics('batching')).execution_count, 2);
    });

    test('an output that breaks the configuration fails its request with INTERNAL, in the same words for every backend', needs('bad_output'), async () => {
      if (fixture.outputsAsReturned === undefined) {
        assert.deepEqual(await infer('bad_output', fp32([1, 2, 3], [1, 3])), {
          status: 500,
          json: { error: "model 'bad_output' output 'OUTPUT0' has shape [1,3], but the configuration expects [-1,2]" },
        });
      } else {
        assert.deepEqual((await infer('bad_output', fp32([1, 2, 3], [1, 3]))).json.outputs, [{ name: 'OUTPUT0', datatype: 'FP32', shape: [1, 3], data: [1, 2, 3] }], fixture.outputsAsReturned);
      }
      assert.deepEqual((await infer('bad_output', fp32([1, 2], [1, 2]))).json.outputs, [{ name: 'OUTPUT0', datatype: 'FP32', shape: [1, 2], data: [1, 2] }]);
    });

    /**
     * Checks what clients see while crashy's instance is down (its restarts fail on the broken model
     * file), then puts the file back and checks that the instance serves again.
     */
    async function checkDownThenRecovered(restoreFile: () => void): Promise<void> {
      assert.equal(await isReady('crashy'), false);
      assert.equal((await server.get('/v2/health/live')).status, 200);
      const refused = await infer('crashy', fp32([1]));
      assert.equal(refused.status, 503);
      const label = "instance 'crashy_0_0' of model 'crashy'";
      assert.match(
        refused.json.error!,
        new RegExp(`^${label} is restarting: its ${fixture.workerKind} (exited with code \\d+|was killed by signal \\w+|could not be restarted \\(.+\\)); the model reports not ready until it is back$`, 's'),
      );
      assert.equal((await infer('bad_output', fp32([1, 2], [1, 2]))).status, 200, 'other models serve meanwhile');
      restoreFile();
      await waitUntilReady('crashy');
      assert.deepEqual((await infer('crashy', fp32([5]))).json.outputs, [{ name: 'OUTPUT0', datatype: 'FP32', shape: [1], data: [5] }]);
    }

    function breakModelFile(): () => void {
      const path = join(repository, 'crashy', '1', fixture.modelFile);
      const original = readFileSync(path);
      writeFileSync(path, 'not a model\n');
      return () => writeFileSync(path, original);
    }

    test('a worker that dies reports unhealthy, answers UNAVAILABLE meanwhile, restarts and serves again', needs('crashy', 'bad_output'), async () => {
      assert.deepEqual((await infer('crashy', fp32([1]))).json.outputs, [{ name: 'OUTPUT0', datatype: 'FP32', shape: [1], data: [1] }]);
      const restore = breakModelFile();
      assert.equal(await killWorkersForTesting('crashy'), 1);
      await checkDownThenRecovered(restore);
    });

    test('a worker that dies under a request fails it, naming the instance, the model and the exit code', { skip: fixture.crashesOnRequest ? needs('crashy', 'bad_output').skip : 'this backend runs no model code that could end its worker' }, async () => {
      const restore = breakModelFile();
      assert.deepEqual(await infer('crashy', fp32([-1])), {
        status: 500,
        json: { error: `instance 'crashy_0_0' of model 'crashy': the ${fixture.workerKind} exited with code 3 while running the request` },
      });
      await checkDownThenRecovered(restore);
    });

    test('unloading a busy model lets the requests it accepted finish; nothing hangs, later requests are refused', needs('slow'), async () => {
      const answers = Promise.all([1, 2, 3].map((value) => infer('slow', fp32([value]))));
      // One request runs on the only instance while two wait behind it.
      while ((await pendingCount('slow')) < 2) await sleep(5);
      const unload = await server.post('/v2/repository/models/slow/unload', '');
      assert.equal(unload.status, 200);
      assert.deepEqual(
        await answers,
        [1, 2, 3].map((value) => ({ status: 200, json: { model_name: 'slow', model_version: '1', outputs: [{ name: 'OUTPUT0', datatype: 'FP32', shape: [1], data: [value] }] } })),
      );
      assert.deepEqual(await infer('slow', fp32([1])), { status: 503, json: { error: "Request for unknown model: 'slow' has no available versions: unloaded" } });
    });
  });
}
