import assert from 'node:assert/strict';
import { test } from 'node:test';
import { isObjectStoragePath, parseObjectStoragePath } from './object-storage-path.js';

test('Amazon S3: the bucket and the prefix of the models', () => {
  assert.deepEqual(parseObjectStoragePath('s3://models/path/to/repository'), { kind: 's3', bucket: 'models', prefix: 'path/to/repository/' });
  assert.deepEqual(parseObjectStoragePath('s3://models'), { kind: 's3', bucket: 'models', prefix: '' });
  assert.deepEqual(parseObjectStoragePath('s3://models//a//b/'), { kind: 's3', bucket: 'models', prefix: 'a/b/' });
});

test('an S3-compatible store: host and port before the bucket, HTTP unless https:// is given', () => {
  assert.deepEqual(parseObjectStoragePath('s3://127.0.0.1:9000/models/repo'), { kind: 's3', endpoint: 'http://127.0.0.1:9000', bucket: 'models', prefix: 'repo/' });
  assert.deepEqual(parseObjectStoragePath('s3://https://s3.us-west-004.backblazeb2.com:443/my-bucket/models'), {
    kind: 's3',
    endpoint: 'https://s3.us-west-004.backblazeb2.com:443',
    bucket: 'my-bucket',
    prefix: 'models/',
  });
  assert.deepEqual(parseObjectStoragePath('s3://minio:9000/b'), { kind: 's3', endpoint: 'http://minio:9000', bucket: 'b', prefix: '' });
});

test('Azure Storage: account, container and prefix', () => {
  assert.deepEqual(parseObjectStoragePath('as://account_name/container_name/path/to/repo'), { kind: 'as', account: 'account_name', container: 'container_name', prefix: 'path/to/repo/' });
  assert.deepEqual(parseObjectStoragePath('as://acct/models'), { kind: 'as', account: 'acct', container: 'models', prefix: '' });
  assert.throws(() => parseObjectStoragePath('as://acct'), { status: 'INVALID_ARG', message: /No account name or container name found in path: as:\/\/acct/ });
});

test('a path without a bucket and gs:// are refused, saying what is built', () => {
  assert.throws(() => parseObjectStoragePath('s3://'), { status: 'INVALID_ARG', message: 'No bucket name found in path: s3://' });
  assert.throws(() => parseObjectStoragePath('gs://bucket/models'), { status: 'UNSUPPORTED', message: /gs:\/\/.*not supported yet; Nereid reads s3:\/\/.* and as:\/\// });
});

test('only object-storage schemes are object storage', () => {
  assert.equal(isObjectStoragePath('s3://b/p'), true);
  assert.equal(isObjectStoragePath('gs://b/p'), true);
  assert.equal(isObjectStoragePath('as://a/c'), true);
  assert.equal(isObjectStoragePath('/models'), false);
  assert.equal(isObjectStoragePath('s3-models'), false);
});
