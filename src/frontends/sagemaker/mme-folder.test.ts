import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, test } from 'node:test';
import { checkInsideRoot, findMmeFolder, normalizeLoadUrl } from './mme-folder.js';

const base = mkdtempSync(join(tmpdir(), 'nereid-mme-'));
after(() => rmSync(base, { recursive: true, force: true }));
const root = join(base, 'models');
const folder = (...parts: string[]): string => {
  const path = join(root, ...parts);
  mkdirSync(path, { recursive: true });
  return path;
};
const config = (path: string, text = 'backend: "python"\n'): void => writeFileSync(join(path, 'config.pbtxt'), text);

test('a load url is made absolute and normal; /dev, /proc and /sys are refused', () => {
  assert.equal(normalizeLoadUrl('/opt/ml/models/a/../b/model'), '/opt/ml/models/b/model');
  assert.equal(normalizeLoadUrl('/proc/self'), undefined);
  assert.equal(normalizeLoadUrl('/sys'), undefined);
  assert.equal(normalizeLoadUrl('/dev/shm/x'), undefined);
  assert.equal(normalizeLoadUrl('/devices/x'), '/devices/x');
});

test("a model's folder is registered through its parent; a folder of models through itself, its ensemble chosen", async () => {
  const model = folder('hash1', 'model');
  config(model);
  assert.deepEqual(await findMmeFolder(model), { repository: join(root, 'hash1'), subfolder: 'model' });
  const many = folder('hash2');
  config(folder('hash2', 'a_step'));
  config(folder('hash2', 'pipeline'), 'platform: "ensemble"\n');
  config(folder('hash2', 'z_step'));
  assert.deepEqual(await findMmeFolder(many), { repository: many, subfolder: 'pipeline' });
  const plain = folder('hash3');
  folder('hash3', 'a');
  folder('hash3', 'b');
  assert.deepEqual(await findMmeFolder(plain), { repository: plain, subfolder: 'b' });
  await assert.rejects(findMmeFolder(folder('empty')), { status: 'INVALID_ARG', message: /^no model folder in '/ });
});

test('only the root and what is inside it, links followed, may be registered', async () => {
  await checkInsideRoot(root, root);
  await checkInsideRoot(folder('..weird'), root);
  await checkInsideRoot(folder('hash1', 'model'), root);
  // A model folder that is the root itself would register the root's parent.
  await assert.rejects(checkInsideRoot(dirname(root), root), { status: 'INVALID_ARG', message: new RegExp(`^'${dirname(root)}' is outside ${root}`) });
  mkdirSync(join(base, 'outside'));
  symlinkSync(join(base, 'outside'), join(root, 'link'));
  await assert.rejects(checkInsideRoot(join(root, 'link'), root), { status: 'INVALID_ARG' });
});
