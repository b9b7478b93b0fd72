import assert from 'node:assert/strict';
import { test } from 'node:test';
import { isObjectStoragePath, parseObjectStoragePath } from './object-storage-path.js';

test('Amazon S3: the bucket and the prefix of the models', () => {
  assert.deepEqual(parseObjectStoragePath('s3://models/path/to/repository'), { bucket: 'models', prefix: 'path/to/repository/' });
  assert.deepEqual(parseObjectStoragePath('s3://models'), { bucket: 'models', prefix: '' });
  assert.deepEqual(parseObjectStoragePath('s3://models//a//b/'), { bucket: 'models', prefix: 'a/b/' });
});

test('an S3-compatible store: host and port before the bucket, HTTP unless https:// is given', () => {
  assert.deepEqual(parseObjectStoragePath('s3://127.0.0.1:9000/models/repo'), { endpoint: 'http://127.0.0.1:9000', bucket: 'models', prefix: 'repo/' });
  assert.deepEqual(parseObjectStoragePath('s3://https://s3.us-west-004.backblazeb2.com:443/my-bucket/models'), {
    endpoint: 'https://s3.us-west-004.backblazeb2.com:443',
    bucket: 'my-bucket',
    prefix: 'models/',
  });
  assert.deepEqual(parseObjectStoragePath('s3://minio:9000/b'), { endpoint: 'http://minio:9000', bucket: 'b', prefix: '' });
});

test('a path without a bucket, gs:// and as:// are refused with what is built', () => {
  assert.throws(() => parseObjectStoragePath('s3://'), { status: 'INVALID_ARG', message: 'No bucket name found in path: s3://' });
  assert.throws(() => parseObjectStoragePath('gs://bucket/models'), { status: 'UNSUPPORTED', message: /gs:\/\/.*not supported yet; Nereid reads s3:\/\// });
  assert.throws(() => parseObjectStoragePath('as://account/container/models'), { status: 'UNSUPPORTED' });
});

test('only object-storage schemes are object storage', () => {
  assert.equal(isObjectStoragePath('s3://b/p'), true);
  assert.equal(isObjectStoragePath('gs://b/p'), true);
  assert.equal(isObjectStoragePath('/models'), false);
  assert.equal(isObjectStoragePath('s3-models'), false);
});
