// Triton's Vertex AI front end (server src/vertex_ai_server.cc), started as Vertex AI starts a container:
// `nereid serve` with the AIP_* environment, spoken to over plain HTTP as Vertex AI and
// qa/L0_vertex_ai/vertex_ai_test.py speak to it.
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { environmentWithout } from '../helpers/environment.js';
import { EXAMPLES, bytesOf } from '../helpers/server.js';

const MAIN = fileURLToPath(new URL('../../src/cli/main.ts', import.meta.url));
const BINARY_MIME = 'application/vnd.vertex-ai-triton.binary+json;json-header-size=';
const REDIRECT = 'X-Vertex-Ai-Triton-Redirect';

const INPUT = Array.from({ length: 16 }, (_, index) => index);
const SUM = INPUT.map((value) => value * 2);
const DIFFERENCE = INPUT.map(() => 0);

interface RunningNereid {
  readonly child: ChildProcess;
  readonly output: () => string;
  /** `http://127.0.0.1:PORT`, the Vertex AI port. */
  readonly vertexUrl: string;
  stop(): Promise<void>;
}

function spawnNereid(args: readonly string[], aip: Record<string, string>): { child: ChildProcess; output: () => string } {
  const child = spawn(process.execPath, ['--import', 'tsx', MAIN, 'serve', '--metrics-port=0', ...args], { stdio: ['ignore', 'pipe', 'pipe'], env: environmentWithout('AIP_', aip) });
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  return { child, output: () => output };
}

/** Starts `nereid serve` and resolves once its Vertex AI port listens. */
async function startNereid(args: readonly string[], aip: Record<string, string>): Promise<RunningNereid> {
  const { child, output } = spawnNereid(args, aip);
  const port = await new Promise<string>((resolve, reject) => {
    const onData = (): void => {
      const match = /Started Vertex AI HTTPService at 0\.0\.0\.0:(\d+)/.exec(output());
      if (match !== null) resolve(match[1]!);
    };
    child.stderr!.on('data', onData);
    child.once('exit', (code) => reject(new Error(`nereid exited with ${code} before listening:\n${output()}`)));
  });
  return {
    child,
    output,
    vertexUrl: `http://127.0.0.1:${port}`,
    stop: async () => {
      child.kill('SIGTERM');
      if (child.exitCode === null) await once(child, 'exit');
    },
  };
}

/** Runs `nereid serve` that must fail to start; resolves with its exit code and output. */
async function failedStart(args: readonly string[], aip: Record<string, string>): Promise<{ code: number; output: string }> {
  const { child, output } = spawnNereid(args, aip);
  const [code] = (await once(child, 'exit')) as [number];
  return { code, output: output() };
}

/** The JSON request of vertex_ai_test.py: INPUT0 and INPUT1 are 0..15, the outputs asked for as JSON unless `binaryOutput`. */
function simpleRequest(binaryOutput = false): Record<string, unknown> {
  return {
    inputs: [
      { name: 'INPUT0', datatype: 'INT32', shape: [1, 16], data: INPUT },
      { name: 'INPUT1', datatype: 'INT32', shape: [1, 16], data: INPUT },
    ],
    outputs: [
      { name: 'OUTPUT0', parameters: { binary_data: binaryOutput } },
      { name: 'OUTPUT1', parameters: { binary_data: false } },
    ],
  };
}

/** vertex_ai_test.py's binary request: INPUT0 as binary data after the JSON header, INPUT1 in the JSON; returns the body and the header's length. */
function binaryRequest(): { body: Buffer; headerLength: number } {
  const header = Buffer.from(
    JSON.stringify({
      inputs: [
        { name: 'INPUT0', datatype: 'INT32', shape: [1, 16], parameters: { binary_data_size: 64 } },
        { name: 'INPUT1', datatype: 'INT32', shape: [1, 16], data: INPUT },
      ],
      outputs: [{ name: 'OUTPUT0', parameters: { binary_data: false } }, { name: 'OUTPUT1', parameters: { binary_data: false } }],
    }),
  );
  return { body: Buffer.concat([header, bytesOf(Int32Array.from(INPUT))]), headerLength: header.byteLength };
}

type Output = { name: string; datatype: string; shape: number[]; data: number[] };
const outputsOf = async (response: Response): Promise<Record<string, number[]>> =>
  Object.fromEntries(((await response.json()) as { outputs: Output[] }).outputs.map((output) => [output.name, output.data]));

/** A model repository holding copies of example models. */
function repositoryOf(...models: string[]): string {
  const root = mkdtempSync(join(tmpdir(), 'nereid-vertex-'));
  for (const model of models) cpSync(join(EXAMPLES, model), join(root, model), { recursive: true });
  return root;
}

describe('the Vertex AI front end', () => {
  const single = repositoryOf('simple');
  const multi = repositoryOf('simple', 'identity_bytes');
  after(() => {
    rmSync(single, { recursive: true, force: true });
    rmSync(multi, { recursive: true, force: true });
  });

  describe('AIP_MODE=PREDICTION, the repository in AIP_STORAGE_URI', () => {
    let nereid: RunningNereid;
    const predict = (body: string | Buffer, headers: Record<string, string> = { 'content-type': 'application/json' }): Promise<Response> =>
      fetch(`${nereid.vertexUrl}/v1/endpoints/7/deployedModels/3:predict`, { method: 'POST', body, headers });
    const redirect = (path: string, init: RequestInit = {}): Promise<Response> =>
      fetch(`${nereid.vertexUrl}/v1/endpoints/7/deployedModels/3:predict`, { method: 'POST', ...init, headers: { [REDIRECT]: path, ...init.headers } });

    before(async () => {
      nereid = await startNereid([], {
        AIP_MODE: 'PREDICTION',
        AIP_HTTP_PORT: '0',
        AIP_STORAGE_URI: single,
        // Vertex AI's routes are regular expressions over the whole path.
        AIP_PREDICT_ROUTE: '/v1/endpoints/[0-9]+/deployedModels/[0-9]+:predict',
        AIP_HEALTH_ROUTE: '/health',
      });
    });
    after(() => nereid.stop());

    test("it serves Vertex AI alone: HTTP and gRPC are off by default, in Triton's start-up lines", () => {
      assert.match(nereid.output(), /Started Vertex AI HTTPService at 0\.0\.0\.0:\d+ \(default model 'simple'\)/);
      assert.doesNotMatch(nereid.output(), /Started HTTPService at/);
      assert.doesNotMatch(nereid.output(), /Started GRPCInferenceService at/);
    });

    test('the health route answers 200 with an empty body while the server is ready, and takes GET only', async () => {
      const health = await fetch(`${nereid.vertexUrl}/health`);
      assert.equal(health.status, 200);
      assert.equal(await health.text(), '');
      const posted = await fetch(`${nereid.vertexUrl}/health`, { method: 'POST' });
      assert.equal(posted.status, 405);
      assert.deepEqual(await posted.json(), { error: 'Method Not Allowed' });
    });

    test('the predict route infers on the only model, in JSON', async () => {
      const response = await predict(JSON.stringify(simpleRequest()));
      assert.equal(response.status, 200);
      assert.deepEqual(await outputsOf(response), { OUTPUT0: SUM, OUTPUT1: DIFFERENCE });
    });

    test("a binary request gives its JSON header's length in the Content-Type", async () => {
      const { body, headerLength } = binaryRequest();
      const response = await predict(body, { 'content-type': `${BINARY_MIME}${headerLength}` });
      assert.equal(response.status, 200);
      assert.deepEqual(await outputsOf(response), { OUTPUT0: SUM, OUTPUT1: DIFFERENCE });
    });

    test('the Inference-Header-Content-Length header is not read: the JSON header is the whole body unless the Content-Type says otherwise', async () => {
      const response = await predict(JSON.stringify(simpleRequest()), { 'content-type': 'application/json', 'inference-header-content-length': '10' });
      assert.equal(response.status, 200);
      assert.deepEqual(await outputsOf(response), { OUTPUT0: SUM, OUTPUT1: DIFFERENCE });
    });

    test('a binary output comes after the JSON, its length in Inference-Header-Content-Length', async () => {
      const response = await predict(JSON.stringify(simpleRequest(true)));
      assert.equal(response.status, 200);
      assert.equal(response.headers.get('content-type'), 'application/octet-stream');
      const headerLength = Number(response.headers.get('inference-header-content-length'));
      const body = Buffer.from(await response.arrayBuffer());
      const header = JSON.parse(body.subarray(0, headerLength).toString()) as { outputs: Array<Output & { parameters?: { binary_data_size?: number } }> };
      assert.equal(header.outputs[0]!.parameters?.binary_data_size, 64);
      const binary = body.subarray(headerLength);
      assert.deepEqual(Array.from(new Int32Array(binary.buffer.slice(binary.byteOffset, binary.byteOffset + 64))), SUM);
      assert.deepEqual(header.outputs[1]!.data, DIFFERENCE);
    });

    test("malformed binary Content-Types are refused with 400 and Triton's words", async () => {
      const { body, headerLength } = binaryRequest();
      const refusal = async (contentType: string): Promise<{ status: number; error: string }> => {
        const response = await predict(body, { 'content-type': contentType });
        return { status: response.status, error: ((await response.json()) as { error: string }).error };
      };
      const misplaced = `additional-string/${BINARY_MIME}${headerLength}`;
      assert.deepEqual(await refusal(misplaced), { status: 400, error: `expect MIME type for binary data starts with '${BINARY_MIME}', got: ${misplaced}` });
      assert.deepEqual(await refusal(`${BINARY_MIME}-123`), { status: 400, error: `inference header size should be in range (0, ${body.byteLength}), got: -123` });
      assert.deepEqual(await refusal(`${BINARY_MIME}12345`), { status: 400, error: `inference header size should be in range (0, ${body.byteLength}), got: 12345` });
      // Not a number: read as 0, C's atoi's answer, so the body is taken as one raw input tensor, which a two-input model refuses.
      assert.deepEqual(await refusal(`${BINARY_MIME}additional-string${headerLength}`), {
        status: 400,
        error: "Raw request must only have 1 input (found 1) to be deduced but got 2 inputs in 'simple' model configuration",
      });
    });

    test('a web page cannot infer: a request with an Origin is refused (403)', async () => {
      const refused = await predict(JSON.stringify(simpleRequest()), { origin: 'http://evil.example', 'content-type': 'text/plain' });
      assert.equal(refused.status, 403);
      assert.deepEqual(await refused.json(), { error: "requests from web pages (Origin 'http://evil.example') are refused on the Vertex AI port: only Vertex AI calls it" });
    });

    test('the predict route takes POST only; other paths are answered 400 with an empty body', async () => {
      const got = await fetch(`${nereid.vertexUrl}/v1/endpoints/7/deployedModels/3:predict`);
      assert.equal(got.status, 405);
      assert.deepEqual(await got.json(), { error: 'Method Not Allowed' });
      for (const path of ['/predict', '/v2/health/ready', '/v1/endpoints/x/deployedModels/3:predict']) {
        const response = await fetch(`${nereid.vertexUrl}${path}`, { method: 'POST', body: '{}' });
        assert.equal(response.status, 400, path);
        assert.equal(await response.text(), '', path);
      }
    });

    test('a redirect reaches the metrics and the KServe v2 paths Triton passes on', async () => {
      const metrics = await redirect('metrics');
      assert.equal(metrics.status, 200);
      assert.match(await metrics.text(), /nv_inference_request_success\{model="simple",version="1"\} \d+/);
      const stats = await redirect('v2/models/stats');
      assert.equal(stats.status, 200);
      assert.equal(((await stats.json()) as { model_stats: Array<{ name: string }> }).model_stats[0]!.name, 'simple');
      const modelStats = await redirect('v2/models/simple/stats');
      assert.equal(modelStats.status, 200);
      assert.match(await modelStats.text(), /"model_stats":\[\{"name":"simple"/);
      const metadata = await redirect('v2');
      assert.equal(metadata.status, 200);
      assert.equal(((await metadata.json()) as { name: string }).name, 'nereid');
      const live = await redirect('v2/health/live');
      assert.equal(live.status, 200);
      assert.equal((await redirect('v2/health/ready')).status, 200);
      assert.equal((await redirect('v2/models/simple/ready')).status, 200);
      assert.equal((await redirect('v2/models/subadd/ready')).status, 400);
      const modelMetadata = await redirect('v2/models/simple');
      assert.equal(((await modelMetadata.json()) as { platform: string }).platform, 'onnxruntime_onnx');
      const config = await redirect('v2/models/simple/config');
      assert.equal(((await config.json()) as { version_policy: unknown }).version_policy !== undefined, true);
      const index = await redirect('v2/repository/index');
      assert.deepEqual(await index.json(), [{ name: 'simple', version: '1', state: 'READY' }]);
      const systemRegions = await redirect('v2/systemsharedmemory/status');
      assert.equal(systemRegions.status, 200);
      assert.deepEqual(await systemRegions.json(), []);
      const cudaRegions = await redirect('v2/cudasharedmemory/status');
      assert.deepEqual(await cudaRegions.json(), []);
      const infer = await redirect('v2/models/simple/versions/1/infer', { body: JSON.stringify(simpleRequest()), headers: { 'content-type': 'application/json' } });
      assert.deepEqual(await outputsOf(infer), { OUTPUT0: SUM, OUTPUT1: DIFFERENCE });
    });

    test('a redirect to model control is refused in the model control mode NONE, in Triton\'s words', async () => {
      const unload = await redirect('v2/repository/models/simple/unload');
      assert.notEqual(unload.status, 200);
      assert.match(((await unload.json()) as { error: string }).error, /^explicit model load \/ unload is not allowed/);
      assert.equal((await fetch(`${nereid.vertexUrl}/health`)).status, 200);
    });

    test('a redirect elsewhere (logging, trace settings, generate, unknown paths) is answered 400, and a redirect takes POST only', async () => {
      for (const path of ['v2/logging', 'v2/trace/setting', 'v2/models/simple/generate', 'v3/models', 'v2/models/simple/versions/x']) {
        const response = await redirect(path, { body: '{}' });
        assert.equal(response.status, 400, path);
        assert.equal(await response.text(), '', path);
      }
      const got = await fetch(`${nereid.vertexUrl}/v1/endpoints/7/deployedModels/3:predict`, { headers: { [REDIRECT]: 'v2' } });
      assert.equal(got.status, 405);
      assert.equal(await got.text(), '');
    });
  });

  describe('--allow-vertex-ai next to HTTP, with a default model and restricted APIs', () => {
    let nereid: RunningNereid;
    const aip = { AIP_PREDICT_ROUTE: '/predict', AIP_HEALTH_ROUTE: '/health' };
    before(async () => {
      nereid = await startNereid(
        [
          '--allow-vertex-ai=true',
          '--vertex-ai-port=0',
          '--vertex-ai-default-model=simple',
          '--model-repository',
          multi,
          '--http-port=0',
          '--http-address=127.0.0.1',
          '--allow-grpc=false',
          '--http-restricted-api=metadata,model-config:X-Vertex-Restricted=secret',
        ],
        aip,
      );
    });
    after(() => nereid.stop());

    test('both front ends start', () => {
      assert.match(nereid.output(), /Started HTTPService at 127\.0\.0\.1:\d+/);
      assert.match(nereid.output(), /Started Vertex AI HTTPService at 0\.0\.0\.0:\d+ \(default model 'simple'\)/);
    });

    test('the predict route infers on the default model; a redirect infers on another', async () => {
      const response = await fetch(`${nereid.vertexUrl}/predict`, { method: 'POST', body: JSON.stringify(simpleRequest()) });
      assert.deepEqual(await outputsOf(response), { OUTPUT0: SUM, OUTPUT1: DIFFERENCE });
      const other = await fetch(`${nereid.vertexUrl}/predict`, {
        method: 'POST',
        headers: { [REDIRECT]: 'v2/models/identity_bytes/infer' },
        body: JSON.stringify({ inputs: [{ name: 'INPUT0', datatype: 'BYTES', shape: [1, 2], data: ['vertex', 'ai'] }] }),
      });
      assert.equal(other.status, 200);
      assert.deepEqual(((await other.json()) as { outputs: Output[] }).outputs[0]!.data, ['vertex', 'ai']);
    });

    test("the HTTP port's restricted APIs hold for redirects, in Triton's words; inference stays open", async () => {
      const refused = await fetch(`${nereid.vertexUrl}/predict`, { method: 'POST', headers: { [REDIRECT]: 'v2' } });
      assert.equal(refused.status, 403);
      assert.deepEqual(await refused.json(), { error: "This API is restricted, expecting header 'X-Vertex-Restricted'" });
      assert.equal((await fetch(`${nereid.vertexUrl}/predict`, { method: 'POST', headers: { [REDIRECT]: 'v2/models/simple/config' } })).status, 403);
      const allowed = await fetch(`${nereid.vertexUrl}/predict`, { method: 'POST', headers: { [REDIRECT]: 'v2', 'X-Vertex-Restricted': 'secret' } });
      assert.equal(allowed.status, 200);
      const inferred = await fetch(`${nereid.vertexUrl}/predict`, { method: 'POST', body: JSON.stringify(simpleRequest()) });
      assert.equal(inferred.status, 200);
    });
  });

  describe("start-up failures, in Triton's words", () => {
    const routes = { AIP_PREDICT_ROUTE: '/predict', AIP_HEALTH_ROUTE: '/health' };
    const cases: Array<{ name: string; args: string[]; aip: Record<string, string>; message: string }> = [
      {
        name: 'no predict route',
        args: ['--allow-vertex-ai=true'],
        aip: { AIP_HEALTH_ROUTE: '/health', AIP_STORAGE_URI: single },
        message: 'failed to start Vertex AI service: Invalid argument - API_PREDICT_ROUTE is not defined for Vertex AI endpoint',
      },
      {
        name: 'no health route',
        args: ['--allow-vertex-ai=true'],
        aip: { AIP_PREDICT_ROUTE: '/predict', AIP_STORAGE_URI: single },
        message: 'failed to start Vertex AI service: Invalid argument - AIP_HEALTH_ROUTE is not defined for Vertex AI endpoint',
      },
      {
        name: 'two models and no default model',
        args: [],
        aip: { AIP_MODE: 'PREDICTION', AIP_STORAGE_URI: multi, ...routes },
        message: 'failed to start Vertex AI service: Invalid argument - Expect the model repository contains only a single model if default model is not specified',
      },
      {
        name: 'a default model that is not loaded',
        args: ['--vertex-ai-default-model=subadd'],
        aip: { AIP_MODE: 'PREDICTION', AIP_STORAGE_URI: single, ...routes },
        message: "failed to start Vertex AI service: Invalid argument - Expect the default model 'subadd' is loaded",
      },
    ];
    for (const { name, args, aip, message } of cases) {
      test(name, async () => {
        const { code, output } = await failedStart(['--vertex-ai-port=0', '--allow-http=false', '--allow-grpc=false', ...args], aip);
        assert.equal(code, 1);
        assert.ok(output.includes(message), output);
        assert.doesNotMatch(output, /Started Vertex AI HTTPService/);
      });
    }
  });
});
