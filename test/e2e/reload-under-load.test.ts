import assert from 'node:assert/strict';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { FIXTURES, startTestServer } from '../helpers/server.js';

/**
 * Model management under traffic: clients keep inferring on `stable` while it is reloaded, its
 * version policy switched between versions, and another model is loaded and unloaded, many times.
 * Version N of the model multiplies by N, so every answer can be checked against the version that
 * says it served it.
 */
test('no request fails or gets a wrong answer while models are reloaded, re-versioned, loaded and unloaded', async (t) => {
  const repository = mkdtempSync(join(tmpdir(), 'nereid-reload-'));
  cpSync(join(FIXTURES, 'versioned_latest'), join(repository, 'stable'), { recursive: true });
  cpSync(join(FIXTURES, 'versioned_latest'), join(repository, 'other'), { recursive: true });
  const baseConfig = readFileSync(join(repository, 'stable', 'config.pbtxt'), 'utf8').replace('name: "versioned_latest"', '');
  const writeConfig = (model: string, policy: string): void => writeFileSync(join(repository, model, 'config.pbtxt'), `${baseConfig}\n${policy}\n`);
  writeConfig('stable', '');
  writeConfig('other', '');
  const server = await startTestServer({ modelRepositories: [repository], modelControlMode: 'explicit', startupModels: ['stable'] });
  t.after(async () => {
    await server.close();
    rmSync(repository, { recursive: true, force: true });
  });

  let isRunning = true;
  let succeeded = 0;
  const failures: string[] = [];
  const versionsSeen = new Set<string>();
  const client = async (id: number): Promise<void> => {
    for (let i = 0; isRunning; i++) {
      const value = id * 1000 + i;
      const response = await server.post('/v2/models/stable/infer', { inputs: [{ name: 'INPUT0', shape: [1, 4], datatype: 'FP32', data: [value, 1, 2, 3] }] });
      const body = (await response.json()) as { model_version?: string; outputs?: Array<{ data: number[] }>; error?: string };
      const version = Number(body.model_version);
      if (response.status !== 200) failures.push(`${response.status}: ${body.error}`);
      else if (body.outputs![0]!.data.join() !== [value, 1, 2, 3].map((x) => x * version).join()) failures.push(`wrong answer from version ${version}`);
      else {
        succeeded++;
        versionsSeen.add(body.model_version!);
      }
    }
  };
  const clients = Array.from({ length: 6 }, (_, id) => client(id));

  const control = async (path: string): Promise<void> => {
    const response = await server.post(path, '');
    assert.equal(response.status, 200, `${path}: ${await response.text()}`);
  };
  for (let round = 0; round < 6; round++) {
    await control('/v2/repository/models/stable/load');
    writeConfig('stable', round % 2 === 0 ? 'version_policy: { specific: { versions: [ 1, 2 ] } }' : '');
    await control('/v2/repository/models/stable/load');
    const serving = ((await (await server.get('/v2/models/stable')).json()) as { versions: string[] }).versions;
    assert.deepEqual(serving, round % 2 === 0 ? ['1', '2'] : ['3'], 'exactly the versions the policy names');
    await control('/v2/repository/models/other/load');
    await control('/v2/repository/models/other/unload');
  }
  isRunning = false;
  await Promise.all(clients);

  t.diagnostic(`${succeeded} requests succeeded during 6 rounds of reload, version change, load and unload; versions seen: ${[...versionsSeen].sort().join(', ')}`);
  assert.deepEqual(failures, []);
  assert.ok(succeeded > 0);
  assert.deepEqual([...versionsSeen].sort(), ['2', '3'], 'requests were served by the old policy (latest: 3) and the new one (highest of 1, 2)');
});
