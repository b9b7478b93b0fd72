import assert from 'node:assert/strict';
import { cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { GrpcClient, ServerError } from '../../src/client/index.js';
import type { Logger } from '../../src/logging/logger.js';
import { EXAMPLES, startTestServer } from '../helpers/server.js';

/** The reason each model is refused, exactly as the index, the load API and the log give it. */
const REASONS: Record<string, string> = {
  ops: "model 'ops': config field 'model_operations' is not supported yet (Nereid loads no custom operation libraries); remove it to load the model",
  agents: "model 'agents': config field 'model_repository_agents' is not supported yet (Nereid has no repository agents); remove it to load the model",
  hosted: "model 'hosted': config field 'instance_group[0].host_policy' is not supported yet (Nereid has no host policies); remove it to load the model",
};

const ADDITIONS: Record<string, string> = {
  ops: 'model_operations { op_library_filename: "libcustom_ops.so" }',
  agents: 'model_repository_agents { agents [{ name: "checksum" }] }',
  hosted: 'instance_group [{ kind: KIND_CPU count: 1 host_policy: "numa0" }]',
};

/** A repository with the simple model as it is and three copies that each set one unimplemented field. */
async function makeRepository(): Promise<string> {
  const root = await mkdtemp(join(tmpdir(), 'nereid-unsupported-'));
  const simple = join(EXAMPLES, 'simple');
  const text = await readFile(join(simple, 'config.pbtxt'), 'utf8');
  await cp(simple, join(root, 'simple'), { recursive: true });
  for (const [name, addition] of Object.entries(ADDITIONS)) {
    await cp(simple, join(root, name), { recursive: true });
    await writeFile(join(root, name, 'config.pbtxt'), `${text.replace('name: "simple"', `name: "${name}"`)}\n${addition}\n`);
  }
  return root;
}

const simpleRequest = {
  inputs: [
    { name: 'INPUT0', shape: [1, 16], datatype: 'INT32', data: Array(16).fill(2) },
    { name: 'INPUT1', shape: [1, 16], datatype: 'INT32', data: Array(16).fill(1) },
  ],
};

describe('configuration fields Nereid does not implement', () => {
  let repository: string;
  before(async () => {
    repository = await makeRepository();
  });
  after(() => rm(repository, { recursive: true, force: true }));

  test('each model is listed UNAVAILABLE with its reason, logged, while the others serve', async () => {
    const errors: string[] = [];
    const logger: Logger = { info() {}, verbose() {}, warning() {}, error: (_component, message) => void errors.push(message) };
    const server = await startTestServer({ modelRepositories: [repository], logger });
    try {
      const index = (await (await server.post('/v2/repository/index', '')).json()) as unknown[];
      assert.deepEqual(index, [
        { name: 'agents', state: 'UNAVAILABLE', reason: REASONS.agents },
        { name: 'hosted', state: 'UNAVAILABLE', reason: REASONS.hosted },
        { name: 'ops', state: 'UNAVAILABLE', reason: REASONS.ops },
        { name: 'simple', version: '1', state: 'READY' },
      ]);
      for (const name of Object.keys(REASONS)) {
        assert.ok(errors.includes(`failed to load '${name}': ${REASONS[name]}`), errors.join('\n'));
        assert.equal((await server.get(`/v2/models/${name}/ready`)).status, 400);
      }
      const infer = await server.post('/v2/models/simple/infer', simpleRequest);
      assert.equal(infer.status, 200);
      const outputs = ((await infer.json()) as { outputs: Array<{ name: string; data: number[] }> }).outputs;
      assert.deepEqual(outputs.find((output) => output.name === 'OUTPUT0')?.data, Array(16).fill(3));
    } finally {
      await server.close();
    }
  });

  test("the load API refuses each with Triton's prefix: HTTP 400 and gRPC INVALID_ARGUMENT", async () => {
    const server = await startTestServer({ modelRepositories: [repository], modelControlMode: 'explicit', startupModels: [] });
    const client = new GrpcClient(server.grpcUrl!);
    try {
      for (const name of Object.keys(REASONS)) {
        const response = await server.post(`/v2/repository/models/${name}/load`, '');
        assert.equal(response.status, 400);
        assert.deepEqual(await response.json(), { error: `load failed for model '${name}': ${REASONS[name]}\n` });
        await assert.rejects(
          client.loadModel(name),
          (error: unknown) =>
            error instanceof ServerError &&
            error.status === 'INVALID_ARG' &&
            error.transport.protocol === 'grpc' &&
            error.transport.grpcCode === 3 &&
            error.message === `load failed for model '${name}': ${REASONS[name]}\n`,
        );
      }
    } finally {
      await client.close();
      await server.close();
    }
  });
});
