import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { startTestServer } from '../helpers/server.js';

/**
 * qa/L0_model_config's custom configuration test, with the identity backend: one model with versions
 * 1 to 4, whose config.pbtxt serves version 1 and whose configs/h100.pbtxt, configs/v100.pbtxt and
 * configs/config.pbtxt serve versions 2, 3 and 4.
 */
const configServing = (version: number): string => `backend: "identity"
max_batch_size: 0
version_policy: { specific: { versions: [ ${version} ] } }
input [ { name: "INPUT0" data_type: TYPE_FP32 dims: [ 1 ] } ]
output [ { name: "OUTPUT0" data_type: TYPE_FP32 dims: [ 1 ] } ]
`;

let repository: string;
before(async () => {
  repository = await mkdtemp(join(tmpdir(), 'nereid-config-name-'));
  const model = join(repository, 'identity');
  for (const version of [1, 2, 3, 4]) await mkdir(join(model, String(version)), { recursive: true });
  await mkdir(join(model, 'configs'));
  await writeFile(join(model, 'config.pbtxt'), configServing(1));
  await writeFile(join(model, 'configs', 'h100.pbtxt'), configServing(2));
  await writeFile(join(model, 'configs', 'v100.pbtxt'), configServing(3));
  await writeFile(join(model, 'configs', 'config.pbtxt'), configServing(4));
});
after(() => rm(repository, { recursive: true, force: true }));

test('--model-config-name picks configs/<name>.pbtxt where the model has it, config.pbtxt otherwise', async () => {
  const served: Record<string, string[]> = {};
  for (const name of [undefined, 'h100', 'v100', 'config', 'h200']) {
    const server = await startTestServer({ modelRepositories: [repository], ...(name !== undefined ? { modelConfigName: name } : {}) });
    try {
      const index = (await (await server.post('/v2/repository/index', { ready: true })).json()) as Array<{ name: string; version: string }>;
      served[name ?? '(none)'] = index.map((entry) => `${entry.name} ${entry.version}`);
    } finally {
      await server.close();
    }
  }
  assert.deepEqual(served, {
    '(none)': ['identity 1'],
    h100: ['identity 2'],
    v100: ['identity 3'],
    config: ['identity 4'],
    h200: ['identity 1'],
  });
});
