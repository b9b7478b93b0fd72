import assert from 'node:assert/strict';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { FIXTURES, type TestServer, startTestServer } from '../helpers/server.js';
import { eventually } from '../helpers/eventually.js';

const fp32 = { inputs: [{ name: 'INPUT0', shape: [1, 4], datatype: 'FP32', data: [1, 1, 1, 1] }] };

/**
 * Waits until `check` holds, polling; the repository is re-read every second in these tests. The
 * poller's rules (what is reloaded when, broken models, skipped intervals) are proven on a fake clock
 * in src/repository/repository-poller.test.ts; these show that POLL mode works for real.
 */
describe('model control mode POLL', () => {
  let server: TestServer;
  let repository: string;
  before(async () => {
    repository = mkdtempSync(join(tmpdir(), 'nereid-poll-'));
    cpSync(join(FIXTURES, 'versioned_latest'), join(repository, 'model_a'), { recursive: true });
    const config = join(repository, 'model_a', 'config.pbtxt');
    writeFileSync(config, readFileSync(config, 'utf8').replace('name: "versioned_latest"', 'name: "model_a"'));
    server = await startTestServer({ modelRepositories: [repository], modelControlMode: 'poll', repositoryPollMs: 1000 });
  });
  after(async () => {
    await server.close();
    rmSync(repository, { recursive: true, force: true });
  });

  const versions = async (name: string): Promise<string[] | undefined> => {
    const response = await server.get(`/v2/models/${name}`);
    return response.status === 200 ? ((await response.json()) as { versions: string[] }).versions : undefined;
  };

  test('a new version folder is loaded at the next poll, and the old one unloaded', async () => {
    assert.deepEqual(await versions('model_a'), ['3']);
    cpSync(join(repository, 'model_a', '1'), join(repository, 'model_a', '4'), { recursive: true });
    await eventually("version 4 of 'model_a' serves", async () => (await versions('model_a'))?.join() === '4', 10);
    const response = await server.post('/v2/models/model_a/infer', fp32);
    assert.deepEqual(((await response.json()) as { outputs: Array<{ data: number[] }> }).outputs[0]!.data, [1, 1, 1, 1], 'version 4 holds the model of version 1');
  });

  test('a new model folder loads, a removed one unloads', async () => {
    cpSync(join(FIXTURES, 'nobatch_fp32'), join(repository, 'model_b'), { recursive: true });
    writeFileSync(join(repository, 'model_b', 'config.pbtxt'), 'platform: "onnxruntime_onnx"\nmax_batch_size: 0\n');
    await eventually("'model_b' is ready", async () => (await server.get('/v2/models/model_b/ready')).status === 200, 10);
    rmSync(join(repository, 'model_b'), { recursive: true });
    await eventually("'model_b' is gone", async () => (await server.get('/v2/models/model_b/ready')).status === 400, 10);
  });

  test('load and unload through the API are refused in POLL mode', async () => {
    const response = await server.post('/v2/repository/models/model_a/load', '');
    assert.equal(response.status, 503);
    assert.match(((await response.json()) as { error: string }).error, /^explicit model load \/ unload is not allowed if polling is enabled; .*the model control mode is POLL/);
  });
});
