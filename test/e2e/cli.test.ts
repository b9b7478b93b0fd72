import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { type AddressInfo, type Socket, createServer } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, test } from 'node:test';
import { FIXTURES } from '../helpers/server.js';

const MAIN = fileURLToPath(new URL('../../src/cli/main.ts', import.meta.url));

function runNereid(args: readonly string[]): { child: ChildProcess; output: () => string } {
  const child = spawn(process.execPath, ['--import', 'tsx', MAIN, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  return { child, output: () => output };
}

/**
 * Starts `nereid serve` on a free port and resolves with its URL once it listens. The fixtures hold models
 * that fail to load on purpose: the server keeps serving the others (`--exit-on-error=false`).
 */
async function serveFixtures(extra: readonly string[] = []): Promise<{ child: ChildProcess; url: string; output: () => string }> {
  const run = runNereid([
    'serve',
    '--model-repository', FIXTURES,
    '--exit-on-error=false',
    '--http-port=0', '--http-address', '127.0.0.1', '--metrics-port=0', '--grpc-port=0',
    ...extra,
  ]);
  const url = await new Promise<string>((resolve, reject) => {
    const onData = (): void => {
      const match = /Started HTTPService at 127\.0\.0\.1:(\d+)/.exec(run.output());
      if (match !== null) resolve(`http://127.0.0.1:${match[1]}`);
    };
    run.child.stderr!.on('data', onData);
    run.child.once('exit', (code) => reject(new Error(`nereid exited with ${code} before listening:\n${run.output()}`)));
  });
  return { ...run, url };
}

/** Resolves once the server has logged `count` inference requests for model 'slow' (needs --log-verbose=1). */
async function requestsArrived(child: ChildProcess, output: () => string, count: number): Promise<void> {
  const arrived = (): boolean => (output().match(/infer for model 'slow'/g) ?? []).length >= count;
  while (!arrived()) await once(child.stderr!, 'data');
}

const slowRequest = JSON.stringify({ inputs: [{ name: 'INPUT0', shape: [3], datatype: 'FP32', data: [1, 2, 3] }] });

describe('nereid serve (the command line)', () => {
  test('an unknown flag is a clear error with a suggestion', async () => {
    const { child, output } = runNereid(['serve', '--model-repository', FIXTURES, '--http-prot', '8000']);
    const [code] = await once(child, 'exit');
    assert.equal(code, 1);
    assert.equal(output(), "nereid serve: unknown flag '--http-prot'. Did you mean '--http-port'? Run 'nereid serve --help' for the flags.\n");
  });

  test("a port already taken stops the start with Triton's line for its service (qa/L0_lifecycle's port collision tests)", async (t) => {
    const repository = mkdtempSync(join(tmpdir(), 'nereid-empty-'));
    t.after(() => rmSync(repository, { recursive: true, force: true }));
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '0.0.0.0', resolve));
    t.after(() => taken.close());
    const port = (taken.address() as AddressInfo).port;
    const free = { http: '--http-port=0', grpc: '--grpc-port=0', metrics: '--metrics-port=0' };
    for (const [service, flag, name] of [
      ['http', 'http-port', 'HTTP'],
      ['grpc', 'grpc-port', 'GRPC'],
      ['metrics', 'metrics-port', 'Metrics'],
    ] as const) {
      const run = runNereid(['serve', '--model-repository', repository, ...Object.values({ ...free, [service]: `--${flag}=${port}` })]);
      const [code] = (await once(run.child, 'exit')) as [number];
      assert.equal(code, 1, run.output());
      const line = `failed to start ${name} service: Unavailable - Socket '0.0.0.0:${port}' already in use`;
      assert.equal(run.output().split(line).length - 1, 1, `${name}: expected the line once in:\n${run.output()}`);
    }
  });

  test('--help lists Triton flag names', async () => {
    const { child, output } = runNereid(['serve', '--help']);
    const [code] = await once(child, 'exit');
    assert.equal(code, 0);
    assert.match(output(), /--model-repository DIR/);
    assert.match(output(), /--exit-timeout-secs SECS/);
  });

  test('the event loop stays free while a model computes', async (t) => {
    const { child, url, output } = await serveFixtures(['--log-verbose=1']);
    t.after(() => child.kill('SIGKILL'));
    const finished: string[] = [];
    const slow = fetch(`${url}/v2/models/slow/infer`, { method: 'POST', body: slowRequest }).then(async (r) => {
      finished.push('slow');
      return r.json();
    });
    await requestsArrived(child, output, 1);
    const live = await fetch(`${url}/v2/health/live`);
    finished.push('live');
    assert.equal(live.status, 200);
    assert.deepEqual(((await slow) as { outputs: Array<{ data: number[] }> }).outputs[0]!.data, [1, 2, 3]);
    assert.deepEqual(finished, ['live', 'slow']);
  });

  test('SIGTERM finishes in-flight requests, refuses new ones and exits 0', async () => {
    const { child, url, output } = await serveFixtures(['--log-verbose=1']);
    const inflight = Array.from({ length: 3 }, () => fetch(`${url}/v2/models/slow/infer`, { method: 'POST', body: slowRequest }));
    await requestsArrived(child, output, 3);
    child.kill('SIGTERM');
    const responses = await Promise.all(inflight);
    for (const response of responses) {
      assert.equal(response.status, 200);
      assert.deepEqual(((await response.json()) as { outputs: Array<{ data: number[] }> }).outputs[0]!.data, [1, 2, 3]);
    }
    const [code] = await once(child, 'exit');
    assert.equal(code, 0, output());
    assert.match(output(), /SIGTERM received: stopping/);
    await assert.rejects(fetch(`${url}/v2/health/live`));
  });

  test('--exit-timeout-secs=0 exits without waiting for in-flight requests', async () => {
    const { child, url, output } = await serveFixtures(['--exit-timeout-secs=0', '--log-verbose=1']);
    const inflight = fetch(`${url}/v2/models/slow/infer`, { method: 'POST', body: JSON.stringify({ inputs: [{ name: 'INPUT0', shape: [1], datatype: 'FP32', data: [1] }] }) }).catch(
      (error: Error) => error,
    );
    await requestsArrived(child, output, 1);
    child.kill('SIGINT');
    const [code] = await once(child, 'exit');
    assert.equal(code, 0);
    assert.ok((await inflight) instanceof Error);
  });

  test('SIGTERM in OpenTelemetry mode with a collector that never answers: the queued spans are dropped with a warning, exit 0', async (t) => {
    // A collector that takes the connection and never answers: the exporter would wait for it, and retry.
    const sockets: Socket[] = [];
    const collector = createServer((socket) => sockets.push(socket));
    collector.listen(0, '127.0.0.1');
    await once(collector, 'listening');
    t.after(() => {
      for (const socket of sockets) socket.destroy();
      collector.close();
    });
    const collectorUrl = `http://127.0.0.1:${(collector.address() as AddressInfo).port}/v1/traces`;
    const { child, url, output } = await serveFixtures(
      ['mode=opentelemetry', 'level=TIMESTAMPS', 'rate=1', `opentelemetry,url=${collectorUrl}`].flatMap((setting) => ['--trace-config', setting]),
    );
    t.after(() => child.kill('SIGKILL'));
    const response = await fetch(`${url}/v2/models/nobatch_fp32/infer`, { method: 'POST', body: JSON.stringify({ inputs: [{ name: 'INPUT0', shape: [1, 2], datatype: 'FP32', data: [1, 2] }] }) });
    assert.equal(response.status, 200);
    child.kill('SIGTERM');
    const [code] = await once(child, 'exit');
    assert.equal(code, 0, output());
    assert.match(output(), new RegExp(`OpenTelemetry: the spans still queued at shutdown were not exported to ${collectorUrl}: the export did not finish within 1000 ms`));
  });
});
