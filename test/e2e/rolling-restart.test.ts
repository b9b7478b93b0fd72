import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { cpSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { parse as parseYaml } from 'yaml';
import { FIXTURES } from '../helpers/server.js';

const MAIN = fileURLToPath(new URL('../../src/cli/main.ts', import.meta.url));
const DEPLOYMENT = fileURLToPath(new URL('../../deploy/kubernetes/base/deployment.yaml', import.meta.url));

interface PodSpec {
  terminationGracePeriodSeconds: number;
  containers: Array<{ args: string[]; readinessProbe: { httpGet: { path: string } }; livenessProbe: { httpGet: { path: string } } }>;
}

/**
 * A rolling restart as Kubernetes runs one, with the Deployment's own flags and probe paths: load on
 * the pod, then SIGTERM. Readiness must drop (so the Service stops sending), every request already
 * accepted must finish with its answer, and the process must exit 0 before the grace period's SIGKILL.
 * The flags are the manifest's, but for the repository (a folder with the slow model) and the ports
 * and addresses (free ports on 127.0.0.1).
 */
test('a rolling restart loses no request: readiness drops, in-flight requests finish, exit 0 within the grace period', async (t) => {
  const pod = (parseYaml(readFileSync(DEPLOYMENT, 'utf8')) as { spec: { template: { spec: PodSpec } } }).spec.template.spec;
  const container = pod.containers[0]!;
  const repository = mkdtempSync(join(tmpdir(), 'nereid-rolling-'));
  t.after(() => rmSync(repository, { recursive: true, force: true }));
  cpSync(join(FIXTURES, 'slow'), join(repository, 'slow'), { recursive: true });
  const args = [
    ...container.args.map((arg) => (arg.startsWith('--model-repository=') ? `--model-repository=${repository}` : arg)),
    '--http-port=0', '--grpc-port=0', '--metrics-port=0', '--http-address=127.0.0.1', '--grpc-address=127.0.0.1', '--log-verbose=1',
  ];
  const child = spawn(process.execPath, ['--import', 'tsx', MAIN, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  t.after(() => child.kill('SIGKILL'));
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = once(child, 'exit');
  while (!/Started HTTPService at 127\.0\.0\.1:\d+/.test(output)) await Promise.race([once(child.stderr, 'data'), exited.then(() => assert.fail(output))]);
  const url = `http://127.0.0.1:${/Started HTTPService at 127\.0\.0\.1:(\d+)/.exec(output)![1]}`;
  const probe = (path: string): Promise<number | 'refused'> => fetch(url + path).then((response) => response.status, () => 'refused' as const);
  assert.equal(await probe(container.livenessProbe.httpGet.path), 200);
  assert.equal(await probe(container.readinessProbe.httpGet.path), 200);

  // Load: more requests than the model's two instances run at once, so some wait in the queue.
  const requestCount = 12;
  let finishedCount = 0;
  const inflight = Array.from({ length: requestCount }, (_, index) =>
    fetch(`${url}/v2/models/slow/infer`, { method: 'POST', body: JSON.stringify({ inputs: [{ name: 'INPUT0', shape: [2], datatype: 'FP32', data: [index, 1] }] }) }).then(
      async (response) => {
        const body = (await response.json()) as { outputs?: Array<{ data: number[] }>; error?: string };
        finishedCount++;
        return { status: response.status, body };
      },
    ),
  );
  while ((output.match(/infer for model 'slow'/g) ?? []).length < requestCount) await once(child.stderr, 'data');

  const signalledAt = Date.now();
  child.kill('SIGTERM');
  let readiness = await probe(container.readinessProbe.httpGet.path);
  while (readiness === 200) readiness = await probe(container.readinessProbe.httpGet.path);
  const stillRunningCount = requestCount - finishedCount;
  const responses = await Promise.all(inflight);
  const [code] = await exited;
  const exitS = (Date.now() - signalledAt) / 1000;

  // 400 is Triton's answer for "not ready" (a probe on a kept-alive connection gets it; a new one is
  // refused once the listener closes); the kubelet counts any status from 400 up as a failed probe.
  assert.ok(readiness === 400 || readiness === 'refused', `readiness after SIGTERM: ${readiness}`);
  assert.ok(stillRunningCount > 0, 'readiness dropped while accepted requests were still running');
  responses.forEach(({ status, body }, index) => {
    assert.equal(status, 200, body.error);
    assert.deepEqual(body.outputs![0]!.data, [index, 1], `request ${index} got its own answer`);
  });
  assert.equal(code, 0, output);
  assert.ok(exitS < pod.terminationGracePeriodSeconds, `exited ${exitS} s after SIGTERM; the grace period is ${pod.terminationGracePeriodSeconds} s`);
  assert.match(output, /SIGTERM received: stopping/);
  assert.equal(await probe(container.livenessProbe.httpGet.path), 'refused');
});
