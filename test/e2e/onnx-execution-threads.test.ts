/**
 * ONNX Runtime instances on shared execution threads (issues 19 and 20): the event loop stays free
 * while a model computes, a crashed thread fails only what it held, and under many concurrent
 * clients every answer carries its own request's data. Models: scripts/generate_hot_path_models.py.
 */
import assert from 'node:assert/strict';
import { cpSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import { test } from 'node:test';
import { killWorkersForTesting } from '../../src/backends/supervised-instance.js';
import { type TestServer, startTestServer } from '../helpers/server.js';

const REPOSITORY = fileURLToPath(new URL('../fixtures/hot_path_repository', import.meta.url));

type Answer = { status: number; json: { error?: string; outputs?: Array<{ name: string; shape: number[]; data: number[] }> } };

async function infer(server: TestServer, model: string, data: number[], shape: number[] = [data.length]): Promise<Answer> {
  const response = await server.post(`/v2/models/${model}/infer`, { inputs: [{ name: 'INPUT0', datatype: 'FP32', shape, data }] });
  return { status: response.status, json: (await response.json()) as Answer['json'] };
}

const output = (data: number[], shape: number[] = [data.length]) => [{ name: 'OUTPUT0', datatype: 'FP32', shape, data }];

async function load(server: TestServer, model: string): Promise<void> {
  const response = await server.post(`/v2/repository/models/${model}/load`, '');
  assert.equal(response.status, 200, await response.text());
}

async function waitUntilReady(server: TestServer, model: string): Promise<void> {
  while ((await server.get(`/v2/models/${model}/ready`)).status !== 200) await sleep(10);
}

test('the event loop keeps answering while a slow model computes', async (t) => {
  const server = await startTestServer({ modelRepositories: [REPOSITORY], modelControlMode: 'explicit', startupModels: ['slow'] });
  t.after(() => server.close());
  for (let round = 0; round < 3; round++) {
    let ticks = 0;
    const timer = setInterval(() => ticks++, 1);
    let isInferred = false;
    const inferred = infer(server, 'slow', [round]).then((answer) => {
      isInferred = true;
      return answer;
    });
    // Both answered while the run is in progress: the main thread was not blocked by it.
    const live = await server.get('/v2/health/live');
    const liveBeforeInfer = !isInferred;
    const ticksBeforeInfer = await new Promise<number>((resolve) => setImmediate(() => resolve(ticks)));
    const answer = await inferred;
    clearInterval(timer);
    assert.equal(live.status, 200);
    assert.equal(liveBeforeInfer, true, 'the health endpoint answered before the slow inference did');
    assert.ok(ticksBeforeInfer > 0, 'a 1 ms timer fired while the slow inference ran');
    assert.deepEqual(answer, { status: 200, json: { model_name: 'slow', model_version: '1', outputs: output([round]) } });
  }
});

test('under 64 concurrent clients every response carries its own request\'s data', async (t) => {
  const server = await startTestServer({ modelRepositories: [REPOSITORY], modelControlMode: 'explicit', startupModels: ['echo', 'solo'] });
  t.after(() => server.close());
  const clients = Array.from({ length: 64 }, async (_, client) => {
    for (let request = 0; request < 8; request++) {
      const rows = 1 + ((client + request) % 3);
      const data = Array.from({ length: rows * 4 }, (_, i) => client * 1000 + request * 10 + i);
      const echo = await infer(server, 'echo', data, [rows, 4]);
      assert.deepEqual(echo, { status: 200, json: { model_name: 'echo', model_version: '1', outputs: output(data, [rows, 4]) } });
      const solo = await infer(server, 'solo', [client * 1000 + request]);
      assert.deepEqual(solo.json.outputs, output([client * 1000 + request]));
    }
  });
  await Promise.all(clients);
});

test('a crashed execution thread fails only the executions it held; its instances come back', async (t) => {
  // Two threads; loaded in this order, slow and slow_b share the first and solo has the second.
  const server = await startTestServer({ modelRepositories: [REPOSITORY], modelControlMode: 'explicit', onnxExecutionThreadCount: 2 });
  t.after(() => server.close());
  for (const model of ['slow', 'solo', 'slow_b']) await load(server, model);

  // Two 100 ms runs for the first thread: one runs, the other waits behind it, when the crash comes.
  const answers = Promise.all([infer(server, 'slow', [1]), infer(server, 'slow_b', [2])]);
  await sleep(50);
  assert.equal(await killWorkersForTesting('slow_b'), 1);
  // The other thread serves meanwhile.
  assert.deepEqual((await infer(server, 'solo', [3])).json.outputs, output([3]));

  // Each request of the crashed thread is answered: with its data if it ran before the thread ended,
  // else with the crash (held) or with the restart (arrived after it); the thread's crash names the exit.
  const [slowAnswer, slowBAnswer] = await answers;
  for (const [model, value, got] of [['slow', 1, slowAnswer], ['slow_b', 2, slowBAnswer]] as const) {
    const label = `instance '${model}_0_0' of model '${model}'`;
    assert.ok(
      (got.status === 200 && got.json.outputs![0]!.data[0] === value) ||
        (got.status === 500 && got.json.error === `${label}: the worker thread exited with code 1 while running the request`) ||
        (got.status === 503 && got.json.error!.startsWith(`${label} is restarting: its worker thread exited with code 1;`)),
      JSON.stringify(got),
    );
  }

  for (const model of ['slow', 'slow_b']) await waitUntilReady(server, model);
  assert.deepEqual((await infer(server, 'slow', [4])).json.outputs, output([4]));
  assert.deepEqual((await infer(server, 'slow_b', [5])).json.outputs, output([5]));
  assert.deepEqual((await infer(server, 'solo', [6])).json.outputs, output([6]));
});

test('an instance whose restarts fail unloads without waiting for a session that never came', async (t) => {
  const repository = mkdtempSync(join(tmpdir(), 'nereid-hot-'));
  t.after(() => rmSync(repository, { recursive: true, force: true }));
  cpSync(join(REPOSITORY, 'solo'), join(repository, 'solo'), { recursive: true });
  const server = await startTestServer({ modelRepositories: [repository], modelControlMode: 'explicit', startupModels: ['solo'] });
  t.after(() => server.close());
  writeFileSync(join(repository, 'solo', '1', 'model.onnx'), 'not a model\n');
  assert.equal(await killWorkersForTesting('solo'), 1);
  const refused = await infer(server, 'solo', [1]);
  assert.equal(refused.status, 503);
  const unload = await server.post('/v2/repository/models/solo/unload', '');
  assert.equal(unload.status, 200);
  assert.equal((await server.get('/v2/models/solo/ready')).status, 400);
});

test('a request or a reply bigger than the instance\'s arena gets a bigger one (the reply four times the request)', async (t) => {
  const server = await startTestServer({ modelRepositories: [REPOSITORY], modelControlMode: 'explicit', startupModels: ['wide'] });
  t.after(() => server.close());
  for (const length of [10, 40_000, 150_000, 10, 150_000]) {
    const data = Array.from({ length }, (_, i) => (i * 7) % 1000);
    const answer = await infer(server, 'wide', data);
    assert.deepEqual(answer, { status: 200, json: { model_name: 'wide', model_version: '1', outputs: output([...data, ...data, ...data, ...data]) } });
  }
});
