import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { test } from 'node:test';
import { ObjectMirror } from './object-mirror.js';
import type { ObjectStore } from './object-store.js';

test("a store's failure: its reason with every secret redacted, Nereid's own sentence and the path intact", async (t) => {
  const localDir = mkdtempSync(join(tmpdir(), 'nereid-mirror-'));
  t.after(() => rmSync(localDir, { recursive: true, force: true }));
  const store: ObjectStore = {
    // eslint-disable-next-line require-yield -- a listing that fails before its first object
    async *list() {
      throw Object.assign(new Error('The request signature we calculated does not match for key y\nat line two'), { name: 'SignatureDoesNotMatch' });
    },
    read: async () => Readable.from([]),
    close() {},
  };
  const mirror = new ObjectMirror({ path: 's3://my-bucket/repository', store, secrets: ['y'], localDir });
  await assert.rejects(mirror.sync(), {
    status: 'UNAVAILABLE',
    message: "cannot read model repository 's3://my-bucket/repository': SignatureDoesNotMatch: The request signature we calculated does not match for ke*** ***",
  });
});
