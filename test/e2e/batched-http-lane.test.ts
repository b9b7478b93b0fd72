import assert from 'node:assert/strict';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import { type TestServer, startTestServer } from '../helpers/server.js';

// cancel_repository's js_wait (answers once its request is cancelled, or at once with `report`: the
// cancellations it saw) behind a dynamic batcher whose queue holds one request.
const WAIT_MODEL = fileURLToPath(new URL('../fixtures/cancel_repository/js_wait/1/model.js', import.meta.url));
const CONFIG = `backend: "javascript"
max_batch_size: 1
input [ { name: "X" data_type: TYPE_FP32 dims: [ 1 ] } ]
output [ { name: "Y" data_type: TYPE_FP32 dims: [ 1 ] } ]
dynamic_batching { max_queue_delay_microseconds: 0 default_queue_policy { max_queue_size: 1 } }
instance_group [ { count: 1 kind: KIND_CPU } ]
`;

function infer(server: TestServer, id: string, options: { readonly signal?: AbortSignal; readonly isReport?: boolean } = {}): Promise<{ status: number; json: unknown }> {
  const body = { id, inputs: [{ name: 'X', datatype: 'FP32', shape: [1, 1], data: [7] }], ...(options.isReport === true ? { parameters: { report: true } } : {}) };
  return server
    .post('/v2/models/queue_of_one/infer', body, options.signal !== undefined ? { signal: options.signal } : {})
    .then(async (response) => ({ status: response.status, json: await response.json() }));
}

async function pendingCount(server: TestServer): Promise<number> {
  const text = await (await fetch(`${server.metricsUrl}/metrics`)).text();
  const line = text.split('\n').find((candidate) => candidate.startsWith('nv_inference_pending_request_count{model="queue_of_one",version="1"}'));
  return line === undefined ? 0 : Number(line.split(' ').at(-1));
}

test("HTTP, batched model: the queue's refusal in Triton's words at once, cancellation of the running and the queued request", async (t) => {
  const repository = mkdtempSync(join(tmpdir(), 'nereid-batched-lane-'));
  mkdirSync(join(repository, 'queue_of_one', '1'), { recursive: true });
  copyFileSync(WAIT_MODEL, join(repository, 'queue_of_one', '1', 'model.js'));
  writeFileSync(join(repository, 'queue_of_one', 'config.pbtxt'), CONFIG);
  const server = await startTestServer({ modelRepositories: [repository] });
  t.after(async () => {
    await server.close();
    rmSync(repository, { recursive: true, force: true });
  });
  const clients = [new AbortController(), new AbortController()];
  const waiting = clients.map((client, index) => infer(server, `waiting${index}`, { signal: client.signal }).catch((error: Error) => error.name));
  // One runs (until cancelled), the other waits in the queue.
  while ((await pendingCount(server)) !== 1) await sleep(5);
  assert.deepEqual(await infer(server, 'third'), {
    status: 503,
    json: { error: "[request id: third] Exceeds maximum queue size: model 'queue_of_one' already has 1 request(s) waiting at priority level 1 (max_queue_size 1)" },
  });
  for (const client of clients) client.abort();
  assert.deepEqual(await Promise.all(waiting), ['AbortError', 'AbortError']);
  while ((await pendingCount(server)) !== 0) await sleep(5);
  // The running request saw its cancellation; the queued one never ran.
  assert.deepEqual(await infer(server, 'report', { isReport: true }), {
    status: 200,
    json: { model_name: 'queue_of_one', model_version: '1', id: 'report', outputs: [{ name: 'Y', datatype: 'FP32', shape: [1, 1], data: [1] }] },
  });
});
