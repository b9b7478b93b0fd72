import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { silentLogger } from '../../src/logging/logger.js';
import { startTestServer } from '../helpers/server.js';

/** A JavaScript model whose first initialize() fails: it leaves a marker file, which the next finds. */
const FLAKY_MODEL = `import { existsSync, writeFileSync } from 'node:fs';

export default class Flaky {
  initialize(args) {
    const marker = args.modelConfig.parameters.marker_file.string_value;
    if (!existsSync(marker)) {
      writeFileSync(marker, 'failed once');
      throw new Error('the first load fails');
    }
  }

  execute(requests) {
    return requests.map((request) => ({ outputs: [{ name: 'Y', datatype: 'INT32', shape: [1], data: request.input('X').data }] }));
  }
}
`;

let root: string;
before(async () => {
  root = await mkdtemp(join(tmpdir(), 'nereid-load-retry-'));
});
after(() => rm(root, { recursive: true, force: true }));

/** A repository with the flaky model, its marker not yet written. */
async function repositoryWithFlaky(name: string): Promise<string> {
  const repository = join(root, name);
  await mkdir(join(repository, 'flaky', '1'), { recursive: true });
  await writeFile(join(repository, 'flaky', '1', 'model.js'), FLAKY_MODEL);
  await writeFile(
    join(repository, 'flaky', 'config.pbtxt'),
    `backend: "javascript"
max_batch_size: 0
input [ { name: "X" data_type: TYPE_INT32 dims: [ 1 ] } ]
output [ { name: "Y" data_type: TYPE_INT32 dims: [ 1 ] } ]
instance_group [ { count: 1 kind: KIND_CPU } ]
parameters { key: "marker_file" value: { string_value: "${join(repository, 'marker')}" } }
`,
  );
  return repository;
}

async function stateOf(server: Awaited<ReturnType<typeof startTestServer>>): Promise<{ state: string; reason?: string }> {
  const index = (await (await server.post('/v2/repository/index', '')).json()) as Array<{ name: string; state: string; reason?: string }>;
  const { state, reason } = index.find((entry) => entry.name === 'flaky')!;
  return reason === undefined || reason === '' ? { state } : { state, reason };
}

test('--model-load-retry-count=1: a version whose load failed is loaded again, and serves', async () => {
  const warnings: string[] = [];
  const server = await startTestServer({
    modelRepositories: [await repositoryWithFlaky('retried')],
    modelLoadRetryCount: 1,
    logger: { ...silentLogger, warning: (_component, message) => warnings.push(message) },
  });
  try {
    assert.deepEqual(await stateOf(server), { state: 'READY' });
    const response = await server.post('/v2/models/flaky/infer', { inputs: [{ name: 'X', datatype: 'INT32', shape: [1], data: [7] }] });
    assert.deepEqual(((await response.json()) as { outputs: Array<{ data: number[] }> }).outputs[0]!.data, [7]);
    assert.equal(warnings.filter((warning) => warning.startsWith("failed to load 'flaky' version 1 (attempt 1), trying again (--model-load-retry-count): ")).length, 1);
  } finally {
    await server.close();
  }
});

test('without it (0, the default), the first failure makes the version UNAVAILABLE', async () => {
  const server = await startTestServer({ modelRepositories: [await repositoryWithFlaky('once')] });
  try {
    const { state, reason } = await stateOf(server);
    assert.equal(state, 'UNAVAILABLE');
    assert.match(reason!, /the first load fails/);
  } finally {
    await server.close();
  }
});
