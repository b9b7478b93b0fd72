import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { redactSecrets } from './redact-secrets.js';
import { resolveS3Settings } from './s3-settings.js';

test('the environment: keys, session token and AWS_DEFAULT_REGION', async () => {
  const settings = await resolveS3Settings('s3://b/p', { AWS_ACCESS_KEY_ID: 'AKID', AWS_SECRET_ACCESS_KEY: 'SECRET', AWS_SESSION_TOKEN: 'TOKEN', AWS_DEFAULT_REGION: 'eu-west-1' });
  assert.deepEqual(settings, {
    region: 'eu-west-1',
    credentials: { accessKeyId: 'AKID', secretAccessKey: 'SECRET', sessionToken: 'TOKEN' },
    secrets: ['AKID', 'SECRET', 'TOKEN'],
  });
});

test('no keys in the environment: the SDK chain decides, in us-east-1 by default', async () => {
  assert.deepEqual(await resolveS3Settings('s3://b/p', {}), { region: 'us-east-1', secrets: [] });
  assert.equal((await resolveS3Settings('s3://b/p', { AWS_REGION: 'ap-south-1' })).region, 'ap-south-1');
});

test("Triton's credential file: the longest matching name wins, an empty value is unset", async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'nereid-credentials-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const file = join(dir, 'cloud_credential.json');
  writeFileSync(
    file,
    JSON.stringify({
      s3: {
        '': { secret_key: 'S0', key_id: 'K0', region: 'r0', session_token: '', profile: '' },
        's3://bucket-002': { secret_key: 'S2', key_id: 'K2', region: '', session_token: 'T2', profile: 'p2' },
        's3://https://host:443/b': { secret_key: 'S3', key_id: 'K3', region: 'r3' },
      },
    }),
  );
  const env = { TRITON_CLOUD_CREDENTIAL_PATH: file, AWS_ACCESS_KEY_ID: 'ignored', AWS_SECRET_ACCESS_KEY: 'ignored' };
  assert.deepEqual(await resolveS3Settings('s3://any/models', env), { region: 'r0', credentials: { accessKeyId: 'K0', secretAccessKey: 'S0' }, secrets: ['K0', 'S0'] });
  assert.deepEqual(await resolveS3Settings('s3://bucket-002/models', env), {
    region: 'us-east-1',
    credentials: { accessKeyId: 'K2', secretAccessKey: 'S2', sessionToken: 'T2' },
    profile: 'p2',
    secrets: ['K2', 'S2', 'T2'],
  });
  assert.equal((await resolveS3Settings('s3://https://host:443/b/models', env)).region, 'r3');
});

test('a broken credential file is named, its content never quoted', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'nereid-credentials-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const file = join(dir, 'bad.json');
  writeFileSync(file, '{"s3": {"": {"secret_key": "TOPSECRET",');
  await assert.rejects(resolveS3Settings('s3://b', { TRITON_CLOUD_CREDENTIAL_PATH: file }), (error: Error) => {
    assert.match(error.message, /TRITON_CLOUD_CREDENTIAL_PATH \('.*bad\.json'\) is not valid JSON/);
    assert.doesNotMatch(error.message, /TOPSECRET/);
    return true;
  });
  await assert.rejects(resolveS3Settings('s3://b', { TRITON_CLOUD_CREDENTIAL_PATH: join(dir, 'missing.json') }), { status: 'INVALID_ARG', message: /cannot read the credential file/ });
});

test('redactSecrets hides every occurrence', () => {
  assert.equal(redactSecrets('key AKID and AKID, secret SECRET', ['AKID', 'SECRET']), 'key *** and ***, secret ***');
});
