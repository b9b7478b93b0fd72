import assert from 'node:assert/strict';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, test } from 'node:test';
import { PYTHON_FIXTURES, copyRepository, inferJson, outputData } from '../helpers/python-models.js';
import { type TestServer, startTestServer } from '../helpers/server.js';

const action = (value: string): unknown => ({ inputs: [{ name: 'ACTION', shape: [1], datatype: 'BYTES', data: [value] }] });

/** Polls until `check` holds (the test runner's timeout bounds it). */
async function waitUntil(check: () => Promise<boolean>): Promise<void> {
  while (!(await check())) await sleep(20);
}

describe('Python backend: a crashed or hung process is restarted', () => {
  let server: TestServer;
  const repository = copyRepository([{ from: PYTHON_FIXTURES, models: ['crashy', 'add_sub'] }]);
  const hold = join(repository.path, 'crashy', 'hold');
  before(async () => {
    server = await startTestServer({ modelRepositories: [repository.path] });
  });
  after(async () => {
    await server.close();
    repository.remove();
  });

  const pid = async (): Promise<number> => {
    const { status, json } = await inferJson(server, 'crashy', action('pid'));
    assert.equal(status, 200, JSON.stringify(json));
    return outputData(json, 'PID')[0] as number;
  };
  const isReady = async (path: string): Promise<boolean> => (await server.get(path)).status === 200;

  /**
   * Makes the process die with `how` while `hold` keeps the next one in initialize(), checks what
   * clients see meanwhile, then lets the new process start and checks that it serves.
   */
  async function crashAndRecover(how: string, description: string): Promise<void> {
    const before = await pid();
    writeFileSync(hold, '');
    const failed = await inferJson(server, 'crashy', action(how));
    assert.equal(failed.status, 500);
    assert.deepEqual(failed.json, { error: `instance 'crashy_0' of model 'crashy': the Python process ${description} while running the request` });

    assert.equal(await isReady('/v2/models/crashy/ready'), false);
    assert.equal(await isReady('/v2/health/live'), true);
    const refused = await inferJson(server, 'crashy', action('pid'));
    assert.equal(refused.status, 503);
    assert.deepEqual(refused.json, {
      error: `instance 'crashy_0' of model 'crashy' is restarting: its Python process ${description}; the model reports not ready until it is back`,
    });
    const other = await inferJson(server, 'add_sub', {
      inputs: [
        { name: 'INPUT0', shape: [1, 16], datatype: 'INT32', data: Array(16).fill(2) },
        { name: 'INPUT1', shape: [1, 16], datatype: 'INT32', data: Array(16).fill(1) },
      ],
    });
    assert.deepEqual(outputData(other.json, 'OUTPUT0'), Array(16).fill(3));

    rmSync(hold);
    await waitUntil(() => isReady('/v2/models/crashy/ready'));
    assert.notEqual(await pid(), before);
  }

  test('a process that exits during a request fails it with the exit code, and a new process takes over', async () => {
    await crashAndRecover('exit', 'exited with code 3');
  });

  test('a process killed by a signal fails its request naming the signal, and a new process takes over', async () => {
    await crashAndRecover('kill', 'was killed by signal SIGKILL');
  });

  test('a process that stops answering health checks is killed as hung, and a new process takes over', async () => {
    await crashAndRecover('hang', 'answered no health check for 1 s (hung) and was killed');
  });
});
