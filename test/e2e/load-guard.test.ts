import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { after, before, describe, test } from 'node:test';
import { type TestServer, startTestServer } from '../helpers/server.js';
import type { Logger } from '../../src/logging/logger.js';

const REPOSITORY = fileURLToPath(new URL('../fixtures/loadguard_repository', import.meta.url));
/**
 * Long enough for `simple` and the models that fail at once to load on a busy machine; the two models
 * that never finish initializing are stopped when it passes.
 */
const LOAD_TIMEOUT_SECS = 15;

const timedOut = (name: string): string =>
  `model '${name}' did not finish loading within ${LOAD_TIMEOUT_SECS} s (--model-load-timeout-secs); its instances were stopped`;

/** Process ids whose command line names `needle` (Linux's /proc). */
function processesNaming(needle: string): string[] {
  return readdirSync('/proc').filter((pid) => {
    if (!/^[0-9]+$/.test(pid)) return false;
    try {
      return readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(needle);
    } catch {
      return false;
    }
  });
}

describe('a model cannot stop the server (issue 24, item 8)', () => {
  let server: TestServer;
  const errors: string[] = [];
  before(async () => {
    const logger: Logger = { info() {}, verbose() {}, warning() {}, error: (_component, message) => void errors.push(message) };
    server = await startTestServer({ modelRepositories: [REPOSITORY], modelLoadTimeoutMs: LOAD_TIMEOUT_SECS * 1000, logger });
  });
  after(() => server.close());

  test('the server opens its ports and simple serves next to the models that used to block start-up', async () => {
    assert.equal((await server.get('/v2/health/live')).status, 200);
    assert.equal((await server.get('/v2/models/simple/ready')).status, 200);
    const data = Array.from({ length: 16 }, (_, i) => i);
    const response = await server.post('/v2/models/simple/infer', {
      inputs: [
        { name: 'INPUT0', shape: [1, 16], datatype: 'INT32', data },
        { name: 'INPUT1', shape: [1, 16], datatype: 'INT32', data },
      ],
    });
    assert.equal(response.status, 200, await response.clone().text());
    const outputs = ((await response.json()) as { outputs: Array<{ name: string; data: number[] }> }).outputs;
    assert.deepEqual(outputs.find((output) => output.name === 'OUTPUT0')!.data, data.map((x) => 2 * x));
  });

  test('each bad model is UNAVAILABLE in the repository index with its reason', async () => {
    const index = (await (await server.post('/v2/repository/index', {})).json()) as unknown[];
    assert.deepEqual(index, [
      {
        name: 'js_init_exit',
        version: '1',
        state: 'UNAVAILABLE',
        reason: "instance 'js_init_exit_0' of model 'js_init_exit': the worker thread exited with code 7 before the model was initialized",
      },
      { name: 'js_init_forever', version: '1', state: 'UNAVAILABLE', reason: timedOut('js_init_forever') },
      {
        name: 'py_init_exit',
        version: '1',
        state: 'UNAVAILABLE',
        reason: "instance 'py_init_exit_0' of model 'py_init_exit': the Python process exited with code 3 before the model was initialized",
      },
      { name: 'py_init_sleep', version: '1', state: 'UNAVAILABLE', reason: timedOut('py_init_sleep') },
      { name: 'simple', version: '1', state: 'READY' },
      {
        name: 'warmup_batch',
        version: '1',
        state: 'UNAVAILABLE',
        reason: "model 'warmup_batch': warmup sample 'big_batch': batch_size 64 is larger than max_batch_size 8",
      },
      {
        name: 'warmup_bytes',
        version: '1',
        state: 'UNAVAILABLE',
        reason: "model 'warmup_bytes': warmup sample 'huge': its inputs hold 4000000000 bytes, more than the 67108864 a request may hold (--http-max-input-size)",
      },
      {
        name: 'warmup_count',
        version: '1',
        state: 'UNAVAILABLE',
        reason: "model 'warmup_count': warmup sample 'runs': count 1000000000 is more than the 1000 runs a warmup sample may ask for",
      },
    ]);
  });

  test('the timed-out loads are logged with the version, and their Python process is stopped, not left running', () => {
    assert.ok(errors.includes(`failed to load 'js_init_forever' version 1: ${timedOut('js_init_forever')}`), errors.join('\n'));
    assert.ok(errors.includes(`failed to load 'py_init_sleep' version 1: ${timedOut('py_init_sleep')}`), errors.join('\n'));
    assert.deepEqual(processesNaming(`${REPOSITORY}/py_init_sleep/`), []);
  });

  test('a bad model is reported as such: the model is not ready, its requests are refused', async () => {
    assert.equal((await server.get('/v2/models/js_init_forever/ready')).status, 400);
    const response = await server.post('/v2/models/py_init_sleep/infer', { inputs: [{ name: 'X', shape: [4], datatype: 'FP32', data: [1, 2, 3, 4] }] });
    assert.equal(response.status, 503);
  });
});
