import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm, symlink, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { findModelFolders, findVersions, fingerprintFolders, scanRepositories } from './repository-scan.js';

let root: string;
before(async () => {
  root = await mkdtemp(join(tmpdir(), 'nereid-scan-'));
  for (const path of ['one/simple/1', 'one/simple/2', 'one/simple/02', 'one/simple/notes', 'one/simple/warmup', 'one/simple/configs', 'one/.hidden', 'two/simple', 'two/other/3']) {
    await mkdir(join(root, path), { recursive: true });
  }
  await writeFile(join(root, 'one', 'README.md'), 'not a model');
  await writeFile(join(root, 'one', 'simple', 'config.pbtxt'), 'name: "simple"');
});
after(() => rm(root, { recursive: true, force: true }));

test('model folders by name, over every repository; hidden folders and files skipped', async () => {
  const found = await scanRepositories([join(root, 'one'), join(root, 'two')]);
  assert.deepEqual(Object.fromEntries([...found].sort()), {
    other: [join(root, 'two', 'other')],
    simple: [join(root, 'one', 'simple'), join(root, 'two', 'simple')],
  });
});

test('model and version folders that are symbolic links are not read, so none leads out of the repository', async () => {
  await mkdir(join(root, 'outside', 'elsewhere', '1'), { recursive: true });
  await mkdir(join(root, 'linked', 'model'), { recursive: true });
  await symlink(join(root, 'outside', 'elsewhere'), join(root, 'linked', 'elsewhere'));
  await symlink(join(root, 'outside', 'elsewhere', '1'), join(root, 'linked', 'model', '7'));
  assert.deepEqual([...(await scanRepositories([join(root, 'linked')])).keys()], ['model']);
  assert.deepEqual(await findVersions(join(root, 'linked', 'model'), () => assert.fail('a link is not a folder to report')), []);
});

test('an unreadable repository is INVALID_ARG naming it', async () => {
  const missing = join(root, 'missing');
  await assert.rejects(scanRepositories([missing]), {
    status: 'INVALID_ARG',
    message: `cannot read model repository '${missing}': ENOENT: no such file or directory, scandir '${missing}'`,
  });
});

test("version folders are 1, 2, ...; Triton's own folders are skipped quietly, others reported", async () => {
  const ignored: string[] = [];
  const versions = await findVersions(join(root, 'one', 'simple'), (folder) => ignored.push(folder));
  assert.deepEqual(versions.sort(), [1, 2]);
  assert.deepEqual(ignored.sort(), ['02', 'notes']);
});

test('the fingerprint changes with a file, a folder or a modification time, and not otherwise', async () => {
  const dirs = [join(root, 'one', 'simple')];
  const first = await fingerprintFolders(dirs);
  assert.equal(await fingerprintFolders(dirs), first);
  await writeFile(join(root, 'one', 'simple', '1', 'model.onnx'), 'x');
  const withFile = await fingerprintFolders(dirs);
  assert.notEqual(withFile, first);
  await utimes(join(root, 'one', 'simple', 'config.pbtxt'), new Date(1_000_000), new Date(1_000_000));
  const touched = await fingerprintFolders(dirs);
  assert.notEqual(touched, withFile);
  await mkdir(join(root, 'one', 'simple', '4'));
  assert.notEqual(await fingerprintFolders(dirs), touched);
  assert.equal(await fingerprintFolders([join(root, 'missing')]), '');
});

test('findModelFolders finds a model by name in each repository, as the scan would, and nothing for a path, a hidden name, a file or a link', async () => {
  const repositories = [join(root, 'one'), join(root, 'two')];
  assert.deepEqual(await findModelFolders(repositories, 'simple'), [join(root, 'one', 'simple'), join(root, 'two', 'simple')]);
  assert.deepEqual(await findModelFolders(repositories, 'other'), [join(root, 'two', 'other')]);
  await symlink(join(root, 'two', 'other'), join(root, 'one', 'linked'));
  for (const name of ['missing', '../one', 'simple/1', '.hidden', 'README.md', '', 'linked']) {
    assert.deepEqual(await findModelFolders(repositories, name), [], name);
  }
});
