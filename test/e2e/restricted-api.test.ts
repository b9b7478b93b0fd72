import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { type Client, Metadata, credentials, status } from '@grpc/grpc-js';
import { GrpcClient, HttpClient, ServerError } from '../../src/client/index.js';
import { parseServeArgs } from '../../src/config/server-options.js';
import { type Logger, createLogger } from '../../src/logging/logger.js';
import { startServer } from '../../src/server.js';
import { simpleInputs } from '../helpers/client-conformance.js';
import { loadGrpcServices } from '../helpers/plain-grpc-clients.js';
import { EXAMPLES, type TestServer, startTestServer } from '../helpers/server.js';

/** The content type tritonclient sends with a JSON body; the control routes refuse text/plain (cors-policy.ts). */
const JSON_BODY = { 'content-type': 'application/json' };

const { inference: InferenceClient, health: HealthClient } = loadGrpcServices();

type GrpcFailure = { code: number; details: string };

/** Calls a unary RPC with the given metadata; resolves with the response or rejects with the gRPC error. */
function call(client: Client, method: string, request: object, metadata: Record<string, string> = {}): Promise<Record<string, unknown>> {
  const grpcMetadata = new Metadata();
  for (const [key, value] of Object.entries(metadata)) grpcMetadata.set(key, value);
  type Callback = (error: GrpcFailure | null, response: Record<string, unknown>) => void;
  return new Promise((resolve, reject) => {
    (client as unknown as Record<string, (request: object, metadata: Metadata, callback: Callback) => void>)[method]!(request, grpcMetadata, (error, response) =>
      error !== null ? reject(error) : resolve(response),
    );
  });
}

/** The gRPC status a call ends with: OK, or its error's code and details. */
const outcome = (promise: Promise<unknown>): Promise<{ code: number; details?: string }> =>
  promise.then(
    () => ({ code: status.OK }),
    (error: GrpcFailure) => ({ code: error.code, details: error.details }),
  );

const int32Raw = (values: number[]): Buffer => Buffer.from(new Int32Array(values).buffer);
const simpleGrpcRequest = {
  model_name: 'simple',
  inputs: [
    { name: 'INPUT0', datatype: 'INT32', shape: [1, 16] },
    { name: 'INPUT1', datatype: 'INT32', shape: [1, 16] },
  ],
  raw_input_contents: [int32Raw(Array.from({ length: 16 }, (_, i) => i)), int32Raw(Array.from({ length: 16 }, () => 1))],
};
const simpleHttpRequest = JSON.stringify({
  inputs: [
    { name: 'INPUT0', datatype: 'INT32', shape: [1, 16], data: Array.from({ length: 16 }, (_, i) => i) },
    { name: 'INPUT1', datatype: 'INT32', shape: [1, 16], data: Array.from({ length: 16 }, () => 1) },
  ],
});

/** Starts the server from `nereid serve` flags, on free ports of 127.0.0.1, with `simple` loaded and a logger that writes nothing. */
function serveWithFlags(flags: readonly string[]): Promise<TestServer> {
  const options = parseServeArgs([
    '--model-repository',
    EXAMPLES,
    '--model-control-mode=explicit',
    '--load-model=simple',
    '--strict-readiness=false',
    '--http-address=127.0.0.1',
    '--grpc-address=127.0.0.1',
    '--http-port=0',
    '--grpc-port=0',
    '--metrics-port=0',
    ...flags,
  ]);
  assert.ok(options !== 'help');
  return startTestServer({ ...options, logger: createLogger({ info: false, warning: false, error: false, verboseLevel: 0, format: 'default' }) });
}

/** Each HTTP endpoint of each category: method, path, body; the status it answers once let through. */
const HTTP_ENDPOINTS: Record<string, ReadonlyArray<readonly [string, string, string | undefined, number]>> = {
  health: [
    ['GET', '/v2/health/live', undefined, 200],
    ['GET', '/v2/health/ready', undefined, 200],
    ['GET', '/v2/models/simple/ready', undefined, 200],
  ],
  metadata: [
    ['GET', '/v2', undefined, 200],
    ['GET', '/v2/models/simple', undefined, 200],
    ['GET', '/v2/models/simple/versions/1', undefined, 200],
  ],
  inference: [['POST', '/v2/models/simple/infer', simpleHttpRequest, 200]],
  'shared-memory': [
    ['GET', '/v2/systemsharedmemory/status', undefined, 200],
    ['POST', '/v2/cudasharedmemory/unregister', '{}', 200],
    ['GET', '/v2/cudasharedmemory/status', undefined, 200],
  ],
  'model-config': [['GET', '/v2/models/simple/config', undefined, 200]],
  'model-repository': [
    ['POST', '/v2/repository/index', '{}', 200],
    ['POST', '/v2/repository/models/simple/load', '{}', 200],
  ],
  statistics: [
    ['GET', '/v2/models/stats', undefined, 200],
    ['GET', '/v2/models/simple/stats', undefined, 200],
  ],
  trace: [
    ['GET', '/v2/trace/setting', undefined, 200],
    ['GET', '/v2/models/simple/trace/setting', undefined, 200],
  ],
  logging: [['GET', '/v2/logging', undefined, 200]],
};

/** Each RPC of each category, with a request; the code it answers once let through. */
const GRPC_RPCS: Record<string, ReadonlyArray<readonly [string, object, number]>> = {
  health: [
    ['ServerLive', {}, status.OK],
    ['ServerReady', {}, status.OK],
    ['ModelReady', { name: 'simple' }, status.OK],
  ],
  metadata: [
    ['ServerMetadata', {}, status.OK],
    ['ModelMetadata', { name: 'simple' }, status.OK],
  ],
  inference: [['ModelInfer', simpleGrpcRequest, status.OK]],
  'shared-memory': [
    ['SystemSharedMemoryStatus', {}, status.OK],
    ['CudaSharedMemoryStatus', {}, status.OK],
  ],
  'model-config': [['ModelConfig', { name: 'simple' }, status.OK]],
  'model-repository': [
    ['RepositoryIndex', {}, status.OK],
    ['RepositoryModelLoad', { model_name: 'simple' }, status.OK],
  ],
  statistics: [['ModelStatistics', { name: 'simple' }, status.OK]],
  trace: [['TraceSetting', {}, status.OK]],
  logging: [['LogSettings', {}, status.OK]],
};

const CATEGORIES = ['health', 'metadata', 'inference', 'shared-memory', 'model-config', 'model-repository', 'statistics', 'trace', 'logging'];

describe("Triton's restricted APIs (--http-restricted-api) and protocols (--grpc-restricted-protocol)", () => {
  let server: TestServer;
  let inference: Client;
  let health: Client;
  before(async () => {
    // One group per category, each with its own header, so that no header opens another category.
    server = await serveWithFlags([
      ...CATEGORIES.map((category) => `--http-restricted-api=${category}:${category}-key=${category}-value`),
      ...CATEGORIES.map((category) => `--grpc-restricted-protocol=${category}:${category}-key=${category}-value`),
    ]);
    inference = new InferenceClient(server.grpcUrl!, credentials.createInsecure());
    health = new HealthClient(server.grpcUrl!, credentials.createInsecure());
  });
  after(async () => {
    inference.close();
    health.close();
    await server.close();
  });

  for (const [category, endpoints] of Object.entries(HTTP_ENDPOINTS)) {
    test(`HTTP ${category}: 403 with Triton's message without its header or with another value; open with it`, async () => {
      for (const [method, path, body, okStatus] of endpoints) {
        const other = category === 'health' ? 'metadata' : 'health';
        for (const headers of [{}, { [`${category}-key`]: 'wrong' }, { [`${other}-key`]: `${other}-value` }]) {
          const refused = await fetch(server.url + path, { method, body, headers });
          assert.equal(refused.status, 403, `${method} ${path} ${JSON.stringify(headers)}`);
          assert.equal(refused.headers.get('content-type'), 'application/json');
          assert.deepEqual(await refused.json(), { error: `This API is restricted, expecting header '${category}-key'` });
        }
        const opened = await fetch(server.url + path, { method, body, headers: { ...JSON_BODY, [`${category.toUpperCase()}-KEY`]: `${category}-value` } });
        assert.equal(opened.status, okStatus, `${method} ${path}: ${await opened.text()}`);
      }
    });
  }

  for (const [category, rpcs] of Object.entries(GRPC_RPCS)) {
    test(`gRPC ${category}: UNAVAILABLE with Triton's message without triton-grpc-protocol-${category}-key; open with it`, async () => {
      const expected = { code: status.UNAVAILABLE, details: `This protocol is restricted, expecting header 'triton-grpc-protocol-${category}-key'` };
      for (const [rpc, request, okCode] of rpcs) {
        assert.deepEqual(await outcome(call(inference, rpc, request)), expected, rpc);
        assert.deepEqual(await outcome(call(inference, rpc, request, { [`triton-grpc-protocol-${category}-key`]: 'wrong' })), expected, rpc);
        // The HTTP spelling of the key is not the gRPC one.
        assert.deepEqual(await outcome(call(inference, rpc, request, { [`${category}-key`]: `${category}-value` })), expected, rpc);
        const opened = await outcome(call(inference, rpc, request, { [`triton-grpc-protocol-${category}-key`]: `${category}-value` }));
        assert.equal(opened.code, okCode, `${rpc}: ${opened.details}`);
      }
    });
  }

  test('gRPC health: grpc.health.v1 Check is in the health category too', async () => {
    assert.deepEqual(await outcome(call(health, 'Check', { service: '' })), {
      code: status.UNAVAILABLE,
      details: "This protocol is restricted, expecting header 'triton-grpc-protocol-health-key'",
    });
    assert.deepEqual(await call(health, 'Check', { service: '' }, { 'triton-grpc-protocol-health-key': 'health-value' }), { status: 'SERVING' });
  });

  test('gRPC inference: ModelStreamInfer is refused as a whole without its key, and streams with it', async () => {
    const refused = (inference as unknown as { ModelStreamInfer(metadata: Metadata): NodeJS.ReadWriteStream }).ModelStreamInfer(new Metadata());
    const failure = await new Promise<GrpcFailure>((resolve) => refused.on('error', resolve).on('data', () => undefined));
    assert.deepEqual({ code: failure.code, details: failure.details }, {
      code: status.UNAVAILABLE,
      details: "This protocol is restricted, expecting header 'triton-grpc-protocol-inference-key'",
    });
    const client = new GrpcClient(server.grpcUrl!, { metadata: { 'triton-grpc-protocol-inference-key': 'inference-value' } });
    try {
      const stream = client.stream();
      stream.send('simple', simpleInputs(), { id: 'one' });
      stream.end();
      const results = [];
      for await (const response of stream) results.push(response);
      assert.deepEqual(
        results.map((response) => [response.id, response.error, response.result?.data('OUTPUT0', 'INT32')]),
        [['one', undefined, Int32Array.from({ length: 16 }, (_, i) => i + 1)]],
      );
    } finally {
      await client.close();
    }
  });

  test('the client library sends the headers and metadata it is given', async () => {
    const http = new HttpClient(server.url, { headers: { 'inference-key': 'inference-value' } });
    const grpc = new GrpcClient(server.grpcUrl!, { metadata: { 'triton-grpc-protocol-inference-key': 'inference-value' } });
    try {
      for (const client of [http, grpc]) {
        const result = await client.infer('simple', simpleInputs());
        assert.deepEqual(result.data('OUTPUT1', 'INT32'), Int32Array.from({ length: 16 }, (_, i) => i - 1));
        await assert.rejects(client.modelConfig('simple'), (error: unknown) => error instanceof ServerError);
      }
      await assert.rejects(http.modelConfig('simple'), {
        name: 'ServerError',
        status: 'PERMISSION_DENIED',
        message: "This API is restricted, expecting header 'model-config-key'",
      });
      await assert.rejects(grpc.modelConfig('simple'), {
        name: 'ServerError',
        status: 'UNAVAILABLE',
        message: "This protocol is restricted, expecting header 'triton-grpc-protocol-model-config-key'",
      });
    } finally {
      await Promise.all([http.close(), grpc.close()]);
    }
  });
});

describe('bearer-token authentication (--auth-token-file)', () => {
  const TOKEN = 'f3c1a9e07b2d4c58a6e1d0b9c7f2e4a1';
  const missing = "this server requires a bearer token: send the header 'Authorization: Bearer <token>'";
  let server: TestServer;
  let inference: Client;
  let health: Client;
  before(async () => {
    const dir = mkdtempSync(join(tmpdir(), 'nereid-auth-'));
    writeFileSync(join(dir, 'token'), `${TOKEN}\n`);
    server = await serveWithFlags([`--auth-token-file=${join(dir, 'token')}`]);
    inference = new InferenceClient(server.grpcUrl!, credentials.createInsecure());
    health = new HealthClient(server.grpcUrl!, credentials.createInsecure());
  });
  after(async () => {
    inference.close();
    health.close();
    await server.close();
  });

  test('HTTP: 401 with WWW-Authenticate without the token or with another; open with it', async () => {
    for (const [method, path, body, okStatus] of Object.values(HTTP_ENDPOINTS).flat()) {
      if (path === '/v2/health/live' || path === '/v2/health/ready') continue;
      for (const [authorization, challenge, error] of [
        [undefined, 'Bearer', missing],
        [`Basic ${Buffer.from(`user:${TOKEN}`).toString('base64')}`, 'Bearer', missing],
        [`Bearer ${TOKEN.slice(1)}`, 'Bearer error="invalid_token"', 'invalid bearer token'],
      ] as const) {
        const refused = await fetch(server.url + path, { method, body, headers: authorization === undefined ? {} : { authorization } });
        assert.equal(refused.status, 401, `${method} ${path}`);
        assert.equal(refused.headers.get('www-authenticate'), challenge);
        assert.deepEqual(await refused.json(), { error });
      }
      const opened = await fetch(server.url + path, { method, body, headers: { ...JSON_BODY, authorization: `Bearer ${TOKEN}` } });
      assert.equal(opened.status, okStatus, `${method} ${path}: ${await opened.text()}`);
    }
  });

  test("the server's liveness and readiness and the metrics port need no token (orchestrators' probes, Prometheus)", async () => {
    assert.equal((await fetch(`${server.url}/v2/health/live`)).status, 200);
    assert.equal((await fetch(`${server.url}/v2/health/ready`)).status, 200);
    assert.equal((await fetch(`${server.metricsUrl!}/metrics`)).status, 200);
    assert.deepEqual(await call(inference, 'ServerLive', {}), { live: true });
    assert.deepEqual(await call(inference, 'ServerReady', {}), { ready: true });
    assert.deepEqual(await call(health, 'Check', { service: '' }), { status: 'SERVING' });
  });

  test('gRPC: UNAUTHENTICATED without the token or with another; open with it', async () => {
    for (const [rpc, request, okCode] of Object.values(GRPC_RPCS).flat()) {
      if (rpc === 'ServerLive' || rpc === 'ServerReady') continue;
      assert.deepEqual(await outcome(call(inference, rpc, request)), { code: status.UNAUTHENTICATED, details: missing }, rpc);
      assert.deepEqual(await outcome(call(inference, rpc, request, { authorization: `Bearer ${TOKEN}x` })), {
        code: status.UNAUTHENTICATED,
        details: 'invalid bearer token',
      }, rpc);
      const opened = await outcome(call(inference, rpc, request, { authorization: `Bearer ${TOKEN}` }));
      assert.equal(opened.code, okCode, `${rpc}: ${opened.details}`);
    }
    const stream = (inference as unknown as { ModelStreamInfer(metadata: Metadata): NodeJS.ReadWriteStream }).ModelStreamInfer(new Metadata());
    const failure = await new Promise<GrpcFailure>((resolve) => stream.on('error', resolve).on('data', () => undefined));
    assert.deepEqual({ code: failure.code, details: failure.details }, { code: status.UNAUTHENTICATED, details: missing });
  });

  test('the client library sends the token with authToken, over both protocols', async () => {
    const clients = [
      [new HttpClient(server.url, { authToken: TOKEN }), new HttpClient(server.url), 401],
      [new GrpcClient(server.grpcUrl!, { authToken: TOKEN }), new GrpcClient(server.grpcUrl!), status.UNAUTHENTICATED],
    ] as const;
    try {
      for (const [withToken, without] of clients) {
        const result = await withToken.infer('simple', simpleInputs());
        assert.deepEqual(result.data('OUTPUT0', 'INT32'), Int32Array.from({ length: 16 }, (_, i) => i + 1));
        assert.deepEqual((await withToken.modelMetadata('simple')).name, 'simple');
        await assert.rejects(without.infer('simple', simpleInputs()), { name: 'ServerError', status: 'UNAUTHENTICATED', message: missing });
      }
      const stream = clients[1][0].stream();
      stream.send('simple', simpleInputs(), { id: 'streamed' });
      stream.end();
      const ids = [];
      for await (const response of stream) ids.push([response.id, response.error]);
      assert.deepEqual(ids, [['streamed', undefined]]);
    } finally {
      await Promise.all(clients.flatMap(([a, b]) => [a.close(), b.close()]));
    }
  });
});

describe('the start-up recommendation of --auth-token-file', () => {
  /** The warnings logged by a server started with these options, which is then closed. */
  async function warningsOf(options: { readonly address: string; readonly authTokenFile?: string }): Promise<string[]> {
    const warnings: string[] = [];
    const logger: Logger = { info() {}, error() {}, verbose() {}, warning: (component, message) => warnings.push(`${component}: ${message}`) };
    const server = await startServer({
      modelRepositories: [EXAMPLES],
      modelControlMode: 'explicit',
      httpPort: 0,
      grpcPort: 0,
      metricsPort: 0,
      httpAddress: options.address,
      grpcAddress: options.address,
      logger,
      ...(options.authTokenFile !== undefined ? { authTokenFile: options.authTokenFile } : {}),
    });
    await server.shutdown();
    return warnings;
  }

  test('a non-loopback address without a token is warned about, once per service; with a token or on loopback, not', async () => {
    const advice = (service: string): string =>
      `server: the ${service} service listens on 0.0.0.0, which other machines can reach, and asks for no token: anyone who can reach the port can infer, load and unload models; start with --auth-token-file=FILE (and see --http-restricted-api, --grpc-restricted-protocol), or listen on 127.0.0.1`;
    assert.deepEqual(await warningsOf({ address: '0.0.0.0' }), [advice('HTTP'), advice('gRPC')]);
    assert.deepEqual(await warningsOf({ address: '127.0.0.1' }), []);
    const dir = mkdtempSync(join(tmpdir(), 'nereid-auth-'));
    writeFileSync(join(dir, 'token'), 'abc');
    assert.deepEqual(await warningsOf({ address: '0.0.0.0', authTokenFile: join(dir, 'token') }), []);
  });
});

describe('the flags on the command line', () => {
  const MAIN = fileURLToPath(new URL('../../src/cli/main.ts', import.meta.url));
  /** Runs `nereid serve` with the flags; resolves with its exit code and everything it wrote. */
  async function serve(flags: readonly string[]): Promise<{ code: number; output: string }> {
    const child = spawn(process.execPath, ['--import', 'tsx', MAIN, 'serve', '--model-repository', EXAMPLES, '--http-port=0', '--grpc-port=0', '--metrics-port=0', ...flags], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const [code] = (await once(child, 'exit')) as [number];
    return { code, output };
  }

  test("bad values are refused with Triton's messages before anything loads", async () => {
    assert.deepEqual(await serve(['--http-restricted-api=inference']), {
      code: 1,
      output: "nereid serve: --http-restricted-api option format is '<config name>:<setting>=<value>'. Got inference\n",
    });
    assert.deepEqual(await serve(['--grpc-restricted-protocol=inference,admin:key=value']), {
      code: 1,
      output:
        "nereid serve: unknown restricted protocol 'admin'. The categories are health, metadata, inference, shared-memory, model-config, model-repository, statistics, trace, logging\n",
    });
    assert.deepEqual(await serve(['--http-restricted-api=inference:a=1', '--http-restricted-api=metadata,inference:b=2']), {
      code: 1,
      output: "nereid serve: restricted api 'inference' can not be specified in multiple config groups\n",
    });
    const missingFile = join(tmpdir(), 'nereid-no-such-token');
    assert.deepEqual(await serve([`--auth-token-file=${missingFile}`]), {
      code: 1,
      output: `--auth-token-file: cannot read '${missingFile}': ENOENT: no such file or directory, open '${missingFile}'\n`,
    });
  });
});
