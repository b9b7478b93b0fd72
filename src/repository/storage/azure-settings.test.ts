import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { resolveAzureSettings } from './azure-settings.js';

test("Triton's variables: AZURE_STORAGE_KEY; the connection string and its key are secrets", async () => {
  assert.deepEqual(await resolveAzureSettings('as://acct/c', { AZURE_STORAGE_ACCOUNT: 'acct', AZURE_STORAGE_KEY: 'KEY==' }), { accountKey: 'KEY==', secrets: ['KEY=='] });
  const connectionString = 'DefaultEndpointsProtocol=http;AccountName=a;AccountKey=SECRET==;BlobEndpoint=http://127.0.0.1:1/a;';
  assert.deepEqual(await resolveAzureSettings('as://a/c', { AZURE_STORAGE_CONNECTION_STRING: connectionString }), { connectionString, secrets: [connectionString, 'SECRET=='] });
  assert.deepEqual(await resolveAzureSettings('as://a/c', {}), { secrets: [] });
});

test("Triton's credential file: the longest matching `as` entry", async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'nereid-credentials-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const file = join(dir, 'cloud_credential.json');
  writeFileSync(file, JSON.stringify({ as: { '': { account_str: 'a', account_key: 'K0' }, 'as://Account-002/Container': { account_str: '', account_key: 'K2' } } }));
  assert.equal((await resolveAzureSettings('as://any/c', { TRITON_CLOUD_CREDENTIAL_PATH: file, AZURE_STORAGE_KEY: 'ignored' })).accountKey, 'K0');
  assert.equal((await resolveAzureSettings('as://Account-002/Container/models', { TRITON_CLOUD_CREDENTIAL_PATH: file })).accountKey, 'K2');
});

test('managed identity is refused, naming what is built', async () => {
  await assert.rejects(resolveAzureSettings('as://a/c', { AZURE_STORAGE_AUTH_TYPE: 'managed_identity' }), { status: 'UNSUPPORTED', message: /'managed_identity' is not supported yet/ });
});
