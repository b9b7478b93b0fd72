import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { RegisteredRepositories } from './registered-repositories.js';

const root = mkdtempSync(join(tmpdir(), 'nereid-registered-'));
after(() => rmSync(root, { recursive: true, force: true }));
const first = join(root, 'first');
const second = join(root, 'second');
mkdirSync(join(first, 'model'), { recursive: true });
mkdirSync(join(first, 'other'), { recursive: true });
mkdirSync(join(second, 'model'), { recursive: true });

test("a registered repository's mapped folder is known by its mapped name only; Triton's errors for the rest", async () => {
  const registered = new RegisteredRepositories();
  await registered.register(first, new Map([['sm_model', 'model']]), ['/startup']);
  assert.equal(registered.folderOf('sm_model'), join(first, 'model'));
  assert.equal(registered.isMapped(join(first, 'model')), true);
  const scan = registered.withoutMapped(new Map([['model', [join(first, 'model')]], ['other', [join(first, 'other')]]]));
  assert.deepEqual(Object.fromEntries(scan), { other: [join(first, 'other')] });
  assert.deepEqual(registered.mappings(), [[first, new Map([['sm_model', join(first, 'model')]])]]);
  await assert.rejects(registered.register(first, new Map(), []), { status: 'ALREADY_EXISTS', message: `model repository '${first}' has already been registered` });
  await assert.rejects(registered.register('/startup', new Map(), ['/startup']), { status: 'INVALID_ARG', message: "failed to register '/startup', repository not found" });
  await assert.rejects(registered.register(root, new Map(), [root]), { status: 'ALREADY_EXISTS', message: `model repository '${root}' has already been registered` });
  await assert.rejects(registered.register(second, new Map([['sm_model', 'model']]), []), {
    status: 'ALREADY_EXISTS',
    message: "failed to register 'sm_model', there is a conflicting mapping for 'sm_model'",
  });
  registered.unregister(first);
  assert.equal(registered.folderOf('sm_model'), undefined);
  assert.throws(() => registered.unregister(first), { status: 'INVALID_ARG', message: `failed to unregister '${first}', repository not found` });
  await registered.register(second, new Map([['sm_model', 'model']]), []);
  assert.deepEqual(registered.paths, [second]);
});
