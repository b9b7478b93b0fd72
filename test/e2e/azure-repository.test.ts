import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { startServer } from '../../src/server.js';
import { AZURE_ACCOUNT, AZURE_KEY, type TestAzurite, startAzurite } from '../helpers/azurite.js';
import { FIXTURES, type TestServer, startTestServer } from '../helpers/server.js';
import { recordingLogger } from '../helpers/recording-logger.js';
import { eventually } from '../helpers/eventually.js';

const fp32 = { inputs: [{ name: 'INPUT0', shape: [1, 4], datatype: 'FP32', data: [1, 1, 1, 1] }] };
const VARIABLES = ['AZURE_STORAGE_CONNECTION_STRING', 'AZURE_STORAGE_KEY', 'AZURE_STORAGE_AUTH_TYPE', 'TRITON_CLOUD_CREDENTIAL_PATH', 'TRITON_AZURE_MOUNT_DIRECTORY', 'TRITON_AWS_MOUNT_DIRECTORY'];

/** Points the server at Azurite through AZURE_STORAGE_CONNECTION_STRING, and restores the environment in `after`. */
function useConnectionString(connectionString: string): void {
  const saved = new Map(VARIABLES.map((name) => [name, process.env[name]]));
  for (const name of VARIABLES) delete process.env[name];
  process.env.AZURE_STORAGE_CONNECTION_STRING = connectionString;
  after(() => {
    for (const [name, value] of saved) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
  });
}

const configOf = (name: string, extra = ''): string =>
  readFileSync(join(FIXTURES, 'versioned_latest', 'config.pbtxt'), 'utf8').replace('name: "versioned_latest"', `name: "${name}"`) + extra;

describe('a model repository in Azure Blob Storage (Azurite, the Azure Storage emulator)', () => {
  let azurite: TestAzurite;
  let server: TestServer;
  const logger = recordingLogger();
  before(async () => {
    azurite = await startAzurite();
    useConnectionString(azurite.connectionString());
    await azurite.createContainer('models');
    await azurite.uploadFolder('models', 'repo/model_a/', join(FIXTURES, 'versioned_latest'));
    await azurite.put('models', 'repo/model_a/config.pbtxt', configOf('model_a'));
    server = await startTestServer({ modelRepositories: [`as://${AZURE_ACCOUNT}/models/repo`], modelControlMode: 'poll', repositoryPollMs: 1000, logger });
  });
  after(async () => {
    await server?.close();
    await azurite?.close();
  });

  const versions = async (name: string): Promise<string[] | undefined> => {
    const response = await server.get(`/v2/models/${name}`);
    return response.status === 200 ? ((await response.json()) as { versions: string[] }).versions : undefined;
  };

  test('the models in the container serve', async () => {
    assert.deepEqual(await versions('model_a'), ['3']);
    const response = await server.post('/v2/models/model_a/infer', fp32);
    assert.deepEqual(((await response.json()) as { outputs: Array<{ data: number[] }> }).outputs[0]!.data, [3, 3, 3, 3]);
  });

  test('POLL: a changed blob reloads its model, a new model loads', async () => {
    await azurite.put('models', 'repo/model_a/config.pbtxt', configOf('model_a', 'version_policy: { all: {} }\n'));
    await azurite.uploadFolder('models', 'repo/model_b/', join(FIXTURES, 'versioned_latest'));
    await azurite.put('models', 'repo/model_b/config.pbtxt', configOf('model_b'));
    await eventually("every version of 'model_a' serves", async () => (await versions('model_a'))?.sort().join() === '1,2,3');
    await eventually("'model_b' is ready", async () => (await server.get('/v2/models/model_b/ready')).status === 200);
  });

  test('no log line holds the account key', () => {
    assert.ok(logger.lines.some((line) => line.includes(`model repository 'as://${AZURE_ACCOUNT}/models/repo'`)));
    for (const line of logger.lines) assert.ok(!line.includes(AZURE_KEY), `a log line holds the key: ${line}`);
  });
});

describe('an Azure repository that cannot be read fails the start with the reason, naming no key', () => {
  let azurite: TestAzurite;
  before(async () => {
    azurite = await startAzurite();
  });
  after(() => azurite.close());

  const start = (repository: string): Promise<unknown> =>
    startServer({ modelRepositories: [repository], httpPort: 0, grpcPort: 0, metricsPort: 0, httpAddress: '127.0.0.1', grpcAddress: '127.0.0.1', logger: recordingLogger() });

  test('a wrong key', async () => {
    const wrongKey = Buffer.from('a-wrong-key-that-must-not-be-printed').toString('base64');
    useConnectionString(azurite.connectionString(wrongKey));
    await assert.rejects(start(`as://${AZURE_ACCOUNT}/models/repo`), (error: Error) => {
      assert.match(error.message, new RegExp(`^cannot read model repository 'as://${AZURE_ACCOUNT}/models/repo': AuthorizationFailure: `));
      assert.ok(!error.message.includes(wrongKey));
      return true;
    });
  });

  test('a missing container', async () => {
    useConnectionString(azurite.connectionString());
    await assert.rejects(start(`as://${AZURE_ACCOUNT}/no-such-container/repo`), {
      status: 'UNAVAILABLE',
      message: new RegExp(`^cannot read model repository 'as://${AZURE_ACCOUNT}/no-such-container/repo': ContainerNotFound: The specified container does not exist\\.$`),
    });
  });

  test('managed identity is refused, naming what is built', async () => {
    useConnectionString(azurite.connectionString());
    process.env.AZURE_STORAGE_AUTH_TYPE = 'managed_identity';
    await assert.rejects(start(`as://${AZURE_ACCOUNT}/models/repo`), { status: 'UNSUPPORTED', message: /Azure authentication 'managed_identity' is not supported yet; set AZURE_STORAGE_KEY/ });
  });
});
