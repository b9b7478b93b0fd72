import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { startServer } from '../../src/server.js';
import { S3_KEY_ID, S3_SECRET, type TestS3Server, startS3Server } from '../helpers/s3-server.js';
import { FIXTURES, type TestServer, startTestServer } from '../helpers/server.js';
import { recordingLogger } from '../helpers/recording-logger.js';
import { eventually } from '../helpers/eventually.js';

const fp32 = { inputs: [{ name: 'INPUT0', shape: [1, 4], datatype: 'FP32', data: [1, 1, 1, 1] }] };
const CREDENTIAL_VARIABLES = ['AWS_ACCESS_KEY_ID', 'AWS_SECRET_ACCESS_KEY', 'AWS_DEFAULT_REGION', 'TRITON_CLOUD_CREDENTIAL_PATH', 'TRITON_AWS_MOUNT_DIRECTORY'];

/** Sets the credentials the server reads from the environment, and gives back the old values in `after`. */
function useCredentials(accessKeyId: string, secretAccessKey: string): void {
  const saved = new Map(CREDENTIAL_VARIABLES.map((name) => [name, process.env[name]]));
  for (const name of CREDENTIAL_VARIABLES) delete process.env[name];
  process.env.AWS_ACCESS_KEY_ID = accessKeyId;
  process.env.AWS_SECRET_ACCESS_KEY = secretAccessKey;
  process.env.AWS_DEFAULT_REGION = 'us-east-1';
  after(() => {
    for (const [name, value] of saved) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
  });
}

const configOf = (name: string, extra = ''): string =>
  readFileSync(join(FIXTURES, 'versioned_latest', 'config.pbtxt'), 'utf8').replace('name: "versioned_latest"', `name: "${name}"`) + extra;

describe('a model repository in S3 (s3rver, a real S3 API server)', () => {
  let s3: TestS3Server;
  let server: TestServer;
  const logger = recordingLogger();
  before(async () => {
    useCredentials(S3_KEY_ID, S3_SECRET);
    s3 = await startS3Server();
    await s3.createBucket('models');
    await s3.uploadFolder('models', 'team/repo/model_a/', join(FIXTURES, 'versioned_latest'));
    await s3.put('models', 'team/repo/model_a/config.pbtxt', configOf('model_a'));
    server = await startTestServer({
      modelRepositories: [`s3://${s3.hostPort}/models/team/repo`],
      modelControlMode: 'poll',
      repositoryPollMs: 1000,
      logger,
    });
  });
  after(async () => {
    await server?.close();
    await s3?.close();
  });

  const versions = async (name: string): Promise<string[] | undefined> => {
    const response = await server.get(`/v2/models/${name}`);
    return response.status === 200 ? ((await response.json()) as { versions: string[] }).versions : undefined;
  };

  test('the models in the bucket serve, and the repository index lists them', async () => {
    assert.deepEqual(await versions('model_a'), ['3']);
    const response = await server.post('/v2/models/model_a/infer', fp32);
    assert.deepEqual(((await response.json()) as { outputs: Array<{ data: number[] }> }).outputs[0]!.data, [3, 3, 3, 3], 'version 3 triples');
    const index = (await (await server.post('/v2/repository/index', {})).json()) as Array<{ name: string; state: string }>;
    assert.deepEqual(index.map(({ name, state }) => [name, state]), [['model_a', 'READY']]);
  });

  test('POLL: a changed object (new ETag) reloads its model', async () => {
    await s3.put('models', 'team/repo/model_a/config.pbtxt', configOf('model_a', 'version_policy: { all: {} }\n'));
    await eventually("every version of 'model_a' serves", async () => (await versions('model_a'))?.sort().join() === '1,2,3');
    const response = await server.post('/v2/models/model_a/versions/2/infer', fp32);
    assert.deepEqual(((await response.json()) as { outputs: Array<{ data: number[] }> }).outputs[0]!.data, [2, 2, 2, 2]);
  });

  test('POLL: a new model loads, and one whose objects are deleted unloads', async () => {
    await s3.uploadFolder('models', 'team/repo/model_b/', join(FIXTURES, 'versioned_latest'));
    await s3.put('models', 'team/repo/model_b/config.pbtxt', configOf('model_b'));
    await eventually("'model_b' is ready", async () => (await server.get('/v2/models/model_b/ready')).status === 200);
    for (const key of ['config.pbtxt', '1/model.onnx', '2/model.onnx', '3/model.onnx']) await s3.remove('models', `team/repo/model_b/${key}`);
    await eventually("'model_b' is gone", async () => (await server.get('/v2/models/model_b/ready')).status === 400);
  });

  test('POLL: an unreachable store is logged with its reason, and the models keep serving their copy', async () => {
    await s3.close();
    const reason = new RegExp(`^E repository\\] poll: cannot read model repository 's3://${s3.hostPort}/models/team/repo': .*ECONNREFUSED`);
    await eventually('a failed poll is logged', async () => logger.lines.some((line) => reason.test(line)));
    const response = await server.post('/v2/models/model_a/versions/3/infer', fp32);
    assert.equal(response.status, 200);
    assert.deepEqual(((await response.json()) as { outputs: Array<{ data: number[] }> }).outputs[0]!.data, [3, 3, 3, 3]);
  });

  test('no log line holds the key id or the secret', () => {
    assert.ok(logger.lines.some((line) => line.includes("model repository 's3://")), 'the copies were logged');
    for (const line of logger.lines) {
      assert.ok(!line.includes(S3_KEY_ID) && !line.includes(S3_SECRET), `a log line holds a credential: ${line}`);
    }
  });
});

describe('an S3 repository that cannot be read fails the start with the reason, naming no credential', () => {
  let s3: TestS3Server;
  before(async () => {
    s3 = await startS3Server();
    await s3.createBucket('models');
  });
  after(() => s3.close());

  const start = (repository: string): Promise<unknown> =>
    startServer({ modelRepositories: [repository], httpPort: 0, grpcPort: 0, metricsPort: 0, httpAddress: '127.0.0.1', grpcAddress: '127.0.0.1', logger: recordingLogger() });

  test('bad credentials', async () => {
    useCredentials('WRONGKEYID0000000000', 'wrong-secret-do-not-print');
    await assert.rejects(start(`s3://${s3.hostPort}/models/repo`), (error: Error) => {
      assert.match(error.message, new RegExp(`^cannot read model repository 's3://${s3.hostPort}/models/repo': InvalidAccessKeyId: The AWS Access Key Id you provided does not exist in our records`));
      assert.ok(!error.message.includes('WRONGKEYID0000000000') && !error.message.includes('wrong-secret-do-not-print'));
      return true;
    });
  });

  test('a missing bucket', async () => {
    useCredentials(S3_KEY_ID, S3_SECRET);
    await assert.rejects(start(`s3://${s3.hostPort}/no-such-bucket/repo`), {
      status: 'UNAVAILABLE',
      message: `cannot read model repository 's3://${s3.hostPort}/no-such-bucket/repo': NoSuchBucket: The specified bucket does not exist`,
    });
  });

  test('gs:// and as:// are refused, naming what is built', async () => {
    await assert.rejects(start('gs://bucket/models'), { status: 'UNSUPPORTED', message: /not supported yet; Nereid reads s3:\/\// });
  });
});
