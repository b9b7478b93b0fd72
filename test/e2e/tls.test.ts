// Issue 24, TLS: HTTPS, gRPC over TLS and mutual TLS, metrics over HTTPS and certificate reloads,
// checked with peers this project did not write (Python's ssl and grpcio, as tritonclient uses them;
// test/interop/tls_client.py) and with nereid/client. The certificates are made with openssl at test
// time (test/helpers/certificates.ts). Needs /usr/bin/python3 with grpcio and openssl.
import assert from 'node:assert/strict';
import { execFile, spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { copyFile, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { connect } from 'node:tls';
import { fileURLToPath } from 'node:url';
import { after, before, describe, test } from 'node:test';
import { ConnectionError, GrpcClient, HttpClient } from '../../src/client/index.js';
import type { Logger } from '../../src/logging/logger.js';
import { type RunningServer, type StartOptions, startServer } from '../../src/server.js';
import { SERVER_SERIAL, type TestCertificates, createTestCertificates } from '../helpers/certificates.js';
import { EXAMPLES } from '../helpers/server.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const MAIN = join(ROOT, 'src/cli/main.ts');
const CLIENT = join(ROOT, 'test/interop/tls_client.py');
// Debian's interpreter, whose dist-packages hold python3-grpcio.
const PYTHON = '/usr/bin/python3';

function missingTools(): string | undefined {
  const missing: string[] = [];
  if (spawnSync('openssl', ['version']).status !== 0) missing.push('openssl');
  if (spawnSync(PYTHON, ['-I', '-c', 'import grpc, ssl']).status !== 0) missing.push('python3-grpcio');
  return missing.length === 0 ? undefined : `missing ${missing.join(', ')}`;
}
const missing = missingTools();
// CI installs the tools, so there a missing one is a failure, not a skip.
const skip = missing !== undefined && !process.env['CI'] ? `${missing}; see .ci/run` : false;

interface HttpsAnswer {
  status?: number;
  body?: string;
  serial?: string;
  subject?: string;
  error?: string;
}
interface GrpcAnswer {
  live?: boolean;
  name?: string;
  error?: string;
}

/** Runs the Python peer without blocking the event loop (the server under test runs in this process). */
function python<T>(args: readonly string[]): Promise<T> {
  return new Promise((resolve, reject) => {
    execFile(PYTHON, ['-I', CLIENT, ...args], { timeout: 60_000 }, (error, stdout, stderr) => {
      if (error) reject(new Error(`tls_client.py ${args.join(' ')} failed: ${error.message}\n${stderr}`));
      else resolve(JSON.parse(stdout) as T);
    });
  });
}

/**
 * The serial of the certificate a new TLS connection to the port is shown; to the gRPC port (`isGrpc`)
 * with ALPN h2, as gRPC asks, and the client certificate that its mutual TLS wants.
 */
function servedSerial(port: number, certs: TestCertificates, isGrpc: boolean): Promise<string> {
  return Promise.all([readFile(certs.caCert), readFile(certs.clientCert), readFile(certs.clientKey)]).then(
    ([ca, cert, key]) =>
      new Promise((resolve, reject) => {
        const socket = connect({ host: '127.0.0.1', port, servername: 'localhost', ca, ...(isGrpc ? { ALPNProtocols: ['h2'], cert, key } : {}) }, () => {
          resolve(socket.getPeerCertificate().serialNumber);
          socket.destroy();
        });
        socket.once('error', reject);
      }),
  );
}

/** A logger that keeps the error lines. */
function recordingLogger(): Logger & { readonly errors: string[] } {
  const errors: string[] = [];
  return { errors, info() {}, warning() {}, verbose() {}, error: (_component, message) => errors.push(message) };
}

const portOf = (url: string): number => Number(/:(\d+)$/.exec(url.replace(/\/$/, ''))![1]);
const INPUTS = [
  { name: 'INPUT0', datatype: 'INT32', shape: [1, 16], data: Int32Array.from({ length: 16 }, (_, i) => i) },
  { name: 'INPUT1', datatype: 'INT32', shape: [1, 16], data: new Int32Array(16).fill(1) },
] as const;
const SUMS = Array.from({ length: 16 }, (_, i) => i + 1);

const start = (options: Omit<StartOptions, 'modelRepositories'>): Promise<RunningServer> =>
  startServer({
    modelRepositories: [EXAMPLES],
    modelControlMode: 'explicit',
    startupModels: ['simple'],
    // The other example models stay unloaded, and with strict readiness the server would not be ready.
    isStrictReadiness: false,
    httpPort: 0,
    httpAddress: '127.0.0.1',
    grpcPort: 0,
    grpcAddress: '127.0.0.1',
    metricsPort: 0,
    ...options,
  });

describe('TLS', { skip }, () => {
  let certs: TestCertificates;
  before(async () => {
    certs = await createTestCertificates();
  });
  after(() => certs?.remove());

  describe('HTTPS, metrics over HTTPS and mutual TLS on gRPC', () => {
    let server: RunningServer;
    const logger = recordingLogger();
    // The server reads copies, which the reload tests replace.
    let live: { cert: string; key: string };
    before(async () => {
      live = { cert: join(certs.dir, 'live.crt'), key: join(certs.dir, 'live.key') };
      await copyFile(certs.serverCert, live.cert);
      await copyFile(certs.serverKey, live.key);
      const files = { certFile: live.cert, keyFile: live.key };
      server = await start({
        logger,
        httpTls: { ...files, isMutual: false },
        grpcTls: { ...files, rootCertFile: certs.caCert, isMutual: true },
        metricsTls: { ...files, isMutual: false },
      });
    });
    after(() => server?.shutdown());

    test('the URLs say https://', () => {
      assert.match(server.httpUrl!, /^https:\/\/127\.0\.0\.1:\d+$/);
      assert.match(server.metricsUrl!, /^https:\/\/127\.0\.0\.1:\d+$/);
    });

    test("Python's ssl reads the HTTP API and the metrics over HTTPS, trusting the test CA", async () => {
      const ready = await python<HttpsAnswer>(['https', `${server.httpUrl}/v2/health/ready`, certs.caCert]);
      assert.deepEqual(ready, { status: 200, body: '', serial: SERVER_SERIAL, subject: 'localhost' });
      const metadata = await python<HttpsAnswer>(['https', `${server.httpUrl}/v2/models/simple`, certs.caCert]);
      assert.equal(metadata.status, 200);
      assert.equal((JSON.parse(metadata.body!) as { name: string }).name, 'simple');
      const metrics = await python<HttpsAnswer>(['https', `${server.metricsUrl}/metrics`, certs.caCert]);
      assert.equal(metrics.status, 200);
      assert.match(metrics.body!, /^# HELP nv_inference_request_success /m);
    });

    test('a client that does not trust the CA is refused by its own side', async () => {
      const answer = await python<HttpsAnswer>(['https', `${server.httpUrl}/v2/health/ready`, certs.clientCert]);
      assert.match(answer.error!, /CERTIFICATE_VERIFY_FAILED/);
    });

    test('a plain-HTTP client gets no answer on the HTTPS and metrics ports', async () => {
      await assert.rejects(fetch(`${server.httpUrl!.replace('https:', 'http:')}/v2/health/ready`));
      await assert.rejects(fetch(`${server.metricsUrl!.replace('https:', 'http:')}/metrics`));
    });

    test('nereid/client infers over HTTPS with the CA given', async (t) => {
      const client = new HttpClient(server.httpUrl!, { tls: { ca: await readFile(certs.caCert) } });
      t.after(() => client.close());
      assert.equal(await client.isServerReady(), true);
      const result = await client.infer('simple', [...INPUTS]);
      assert.deepEqual([...result.data('OUTPUT0', 'INT32')], SUMS);
    });

    test("grpcio's ssl_channel_credentials with a client certificate pass mutual TLS", async () => {
      const answer = await python<GrpcAnswer>(['grpc', server.grpcUrl!, certs.caCert, certs.clientCert, certs.clientKey]);
      assert.deepEqual(answer, { live: true, name: 'nereid' });
    });

    test('under mutual TLS, a gRPC client without a certificate is refused', async () => {
      const answer = await python<GrpcAnswer>(['grpc', server.grpcUrl!, certs.caCert]);
      assert.match(answer.error!, /^UNAVAILABLE: /);
      const client = new GrpcClient(server.grpcUrl!, { rootCertificates: await readFile(certs.caCert), timeoutMs: 20_000 });
      try {
        await assert.rejects(client.isServerLive(), ConnectionError);
      } finally {
        await client.close();
      }
    });

    test('a plaintext gRPC client is refused on the TLS port', async () => {
      const client = new GrpcClient(server.grpcUrl!, { timeoutMs: 20_000 });
      try {
        await assert.rejects(client.isServerLive(), ConnectionError);
      } finally {
        await client.close();
      }
    });

    test('nereid/client infers over mutual TLS with tritonclient-style ssl options', async (t) => {
      const [rootCertificates, privateKey, certificateChain] = await Promise.all([readFile(certs.caCert), readFile(certs.clientKey), readFile(certs.clientCert)]);
      const client = new GrpcClient(server.grpcUrl!, { ssl: true, rootCertificates, privateKey, certificateChain });
      t.after(() => client.close());
      const result = await client.infer('simple', [...INPUTS]);
      assert.deepEqual([...result.data('OUTPUT0', 'INT32')], SUMS);
    });

    test('replaced certificate files are used by new connections, without a restart', async () => {
      const renewed = await certs.issueServer('renewed', '1002');
      // Key first: a certificate without its key is never read as a pair.
      await copyFile(renewed.key, live.key);
      await copyFile(renewed.cert, live.cert);
      const httpPort = portOf(server.httpUrl!);
      const grpcPort = portOf(server.grpcUrl!);
      const metricsPort = portOf(server.metricsUrl!);
      // fs.watchFile notices within a second or so; the test's own timeout bounds the wait.
      for (;;) {
        const serials = await Promise.all([servedSerial(httpPort, certs, false), servedSerial(grpcPort, certs, true), servedSerial(metricsPort, certs, false)]);
        if (serials.every((serial) => serial === '1002')) break;
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
      const answer = await python<HttpsAnswer>(['https', `${server.httpUrl}/v2/health/ready`, certs.caCert]);
      assert.equal(answer.serial, '1002');
      assert.deepEqual(await python<GrpcAnswer>(['grpc', server.grpcUrl!, certs.caCert, certs.clientCert, certs.clientKey]), { live: true, name: 'nereid' });
    });

    test('a reload of bad PEM keeps the certificate in use and logs an error', async () => {
      logger.errors.length = 0;
      await writeFile(live.cert, '-----BEGIN CERTIFICATE-----\nnot base64\n-----END CERTIFICATE-----\n');
      assert.equal(await server.reloadCertificates(), false);
      assert.ok(
        logger.errors.some((line) => /^HTTP TLS: reload failed, still using the certificate with serial 1002: --http-server-cert '.*live\.crt' holds a certificate that cannot be parsed/.test(line)),
        logger.errors.join('\n'),
      );
      assert.equal(await servedSerial(portOf(server.httpUrl!), certs, false), '1002');
      assert.equal(await servedSerial(portOf(server.grpcUrl!), certs, true), '1002');
      const answer = await python<HttpsAnswer>(['https', `${server.httpUrl}/v2/health/live`, certs.caCert]);
      assert.equal(answer.status, 200);
    });
  });

  describe('mutual TLS on HTTP and metrics, TLS on gRPC', () => {
    let server: RunningServer;
    before(async () => {
      const files = { certFile: certs.serverCert, keyFile: certs.serverKey, rootCertFile: certs.caCert };
      server = await start({ grpcTls: { ...files, isMutual: false }, httpTls: { ...files, isMutual: true }, metricsTls: { ...files, isMutual: true } });
    });
    after(() => server?.shutdown());

    test("Python's ssl with a client certificate passes mutual HTTPS; without one it is refused", async () => {
      const ready = await python<HttpsAnswer>(['https', `${server.httpUrl}/v2/health/ready`, certs.caCert, certs.clientCert, certs.clientKey]);
      assert.equal(ready.status, 200);
      const metrics = await python<HttpsAnswer>(['https', `${server.metricsUrl}/metrics`, certs.caCert, certs.clientCert, certs.clientKey]);
      assert.equal(metrics.status, 200);
      for (const url of [`${server.httpUrl}/v2/health/ready`, `${server.metricsUrl}/metrics`]) {
        const refused = await python<HttpsAnswer>(['https', url, certs.caCert]);
        assert.equal(refused.status, undefined);
        assert.match(refused.error!, /^SSLError: \[SSL: TLSV13_ALERT_CERTIFICATE_REQUIRED\]/);
      }
    });

    test('nereid/client: HttpClient with a client certificate, and refused without one', async (t) => {
      const [ca, cert, key] = await Promise.all([readFile(certs.caCert), readFile(certs.clientCert), readFile(certs.clientKey)]);
      const client = new HttpClient(server.httpUrl!, { tls: { ca, cert, key } });
      t.after(() => client.close());
      const result = await client.infer('simple', [...INPUTS]);
      assert.deepEqual([...result.data('OUTPUT0', 'INT32')], SUMS);
      const withoutCertificate = new HttpClient(server.httpUrl!, { tls: { ca } });
      t.after(() => withoutCertificate.close());
      await assert.rejects(withoutCertificate.isServerLive(), ConnectionError);
    });

    test("grpcio's ssl_channel_credentials with the root certificate only pass server-side TLS", async () => {
      assert.deepEqual(await python<GrpcAnswer>(['grpc', server.grpcUrl!, certs.caCert]), { live: true, name: 'nereid' });
      const client = new GrpcClient(server.grpcUrl!, { rootCertificates: await readFile(certs.caCert) });
      try {
        assert.equal(await client.isServerLive(), true);
      } finally {
        await client.close();
      }
    });
  });

  test('nereid serve reloads the certificates on SIGHUP and keeps serving', async (t) => {
    const live = { cert: join(certs.dir, 'sighup.crt'), key: join(certs.dir, 'sighup.key') };
    await copyFile(certs.serverCert, live.cert);
    await copyFile(certs.serverKey, live.key);
    const args = ['--model-repository', EXAMPLES, '--model-control-mode=explicit', '--http-address=127.0.0.1', '--http-port=0', '--allow-grpc=false', '--allow-metrics=false'];
    const tlsArgs = ['--http-use-ssl=true', `--http-server-cert=${live.cert}`, `--http-server-key=${live.key}`];
    const child = spawn(process.execPath, ['--import', 'tsx', MAIN, 'serve', ...args, ...tlsArgs], { cwd: ROOT, stdio: ['ignore', 'ignore', 'pipe'] });
    t.after(() => child.kill('SIGKILL'));
    let log = '';
    child.stderr.on('data', (chunk: Buffer) => (log += chunk.toString()));
    const logged = async (pattern: RegExp): Promise<RegExpExecArray> => {
      for (let match = pattern.exec(log); ; match = pattern.exec(log)) {
        if (match !== null) return match;
        if (child.exitCode !== null) throw new Error(`nereid exited with ${child.exitCode}:\n${log}`);
        await once(child.stderr, 'data');
      }
    };
    const url = (await logged(/Started HTTPService at 127\.0\.0\.1:\d+ over TLS \((https:\/\/127\.0\.0\.1:\d+)\)/))[1]!;
    assert.equal((await python<HttpsAnswer>(['https', `${url}/v2/health/live`, certs.caCert])).serial, SERVER_SERIAL);
    const renewed = await certs.issueServer('sighup-renewed', '1003');
    await copyFile(renewed.key, live.key);
    await copyFile(renewed.cert, live.cert);
    child.kill('SIGHUP');
    await logged(/SIGHUP received: reloading the TLS certificates[\s\S]*HTTP TLS: reloaded the certificate of CN=localhost \(serial 1003,/);
    const answer = await python<HttpsAnswer>(['https', `${url}/v2/health/live`, certs.caCert]);
    assert.deepEqual([answer.status, answer.serial], [200, '1003']);
    assert.equal(child.exitCode, null);
  });

  describe('start-up refuses files it cannot use, before listening', () => {
    const refuses = async (options: Omit<StartOptions, 'modelRepositories'>, message: RegExp): Promise<void> => {
      await assert.rejects(start({ ...options, isGrpcAllowed: false, isMetricsAllowed: false }), (error: Error) => {
        assert.match(error.message, message);
        return true;
      });
    };

    test('a missing file, bad PEM, a key of another certificate, a bad root certificate', async () => {
      const bad = join(certs.dir, 'bad.pem');
      await writeFile(bad, 'not a certificate\n');
      const tls = { certFile: certs.serverCert, keyFile: certs.serverKey, isMutual: false };
      await refuses({ httpTls: { ...tls, certFile: join(certs.dir, 'missing.crt') } }, /^HTTP TLS: --http-server-cert '.*missing\.crt' cannot be read: ENOENT/);
      await refuses({ httpTls: { ...tls, certFile: bad } }, /^HTTP TLS: --http-server-cert '.*bad\.pem' holds no PEM certificate/);
      await refuses({ httpTls: { ...tls, keyFile: bad } }, /^HTTP TLS: --http-server-key '.*bad\.pem' is not a PEM private key without a passphrase/);
      await refuses({ httpTls: { ...tls, keyFile: certs.clientKey } }, /^HTTP TLS: --http-server-key '.*client\.key' is not the private key of the certificate in --http-server-cert '.*server\.crt'$/);
      await refuses({ httpTls: { ...tls, rootCertFile: bad, isMutual: true } }, /^HTTP TLS: --http-root-cert '.*bad\.pem' holds no PEM certificate/);
    });
  });
});

test('nereid/client refuses TLS options that cannot work', () => {
  assert.throws(() => new HttpClient('http://localhost:8000', { tls: { ca: 'x' } }), { name: 'ClientError', message: "HttpClient: tls options need an https:// URL, got 'http://localhost:8000'" });
  assert.throws(() => new HttpClient('https://localhost:8000', { tls: { cert: 'x' } }), {
    name: 'ClientError',
    message: 'HttpClient: tls.cert and tls.key go together (the client certificate and its key)',
  });
  assert.throws(() => new GrpcClient('localhost:8001', { privateKey: 'x' }), {
    name: 'ClientError',
    message: 'GrpcClient: privateKey and certificateChain go together (the client certificate and its key)',
  });
});
