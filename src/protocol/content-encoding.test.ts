import assert from 'node:assert/strict';
import { test } from 'node:test';
import { gunzipSync, inflateSync } from 'node:zlib';
import { compressBody, decompressBody } from './content-encoding.js';

test('gzip and deflate bodies, and a limit on what decompresses', async () => {
  const body = Buffer.from('x'.repeat(1000));
  assert.deepEqual(gunzipSync(await compressBody.gzip(body)), body);
  assert.deepEqual(inflateSync(await compressBody.deflate(body)), body);
  assert.deepEqual(await decompressBody.gzip(await compressBody.gzip(body)), body);
  await assert.rejects(decompressBody.deflate(await compressBody.deflate(body), 100), { code: 'ERR_BUFFER_TOO_LARGE' });
});
