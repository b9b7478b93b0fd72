import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { isInside, resolveConfinedPath } from './confined-path.js';

describe('resolveConfinedPath', () => {
  const root = realpathSync(mkdtempSync(join(tmpdir(), 'nereid-confined-')));
  const folder = join(root, 'model');
  mkdirSync(join(folder, 'sub'), { recursive: true });
  writeFileSync(join(folder, 'labels.txt'), 'a\n');
  writeFileSync(join(folder, '..labels'), 'b\n');
  writeFileSync(join(root, 'secret.txt'), 'secret\n');
  symlinkSync(join(root, 'secret.txt'), join(folder, 'linked.txt'));
  symlinkSync(join(folder, 'labels.txt'), join(folder, 'sub', 'inner-link.txt'));
  after(() => rmSync(root, { recursive: true, force: true }));

  test('a file inside the folder resolves to its real path, links inside included', async () => {
    assert.equal(await resolveConfinedPath({ folder, path: 'labels.txt', field: 'label_filename' }), join(folder, 'labels.txt'));
    assert.equal(await resolveConfinedPath({ folder, path: 'sub/../labels.txt', field: 'label_filename' }), join(folder, 'labels.txt'));
    assert.equal(await resolveConfinedPath({ folder, path: 'sub/inner-link.txt', field: 'label_filename' }), join(folder, 'labels.txt'));
    assert.equal(await resolveConfinedPath({ folder, path: '..labels', field: 'label_filename' }), join(folder, '..labels'));
  });

  test("'..', absolute paths and links that lead out are refused, naming the field and the path", async () => {
    const outside = (path: string): string =>
      `label_filename '${path}' resolves to '${join(root, 'secret.txt')}', outside '${folder}'; expected a path inside that folder (no '..', no absolute path, no symbolic link that leads out)`;
    await assert.rejects(resolveConfinedPath({ folder, path: '../secret.txt', field: 'label_filename' }), { status: 'INVALID_ARG', message: outside('../secret.txt') });
    await assert.rejects(resolveConfinedPath({ folder, path: join(root, 'secret.txt'), field: 'label_filename' }), { message: outside(join(root, 'secret.txt')) });
    await assert.rejects(resolveConfinedPath({ folder, path: 'linked.txt', field: 'label_filename' }), { message: outside('linked.txt') });
  });

  test('a missing path is refused with the system reason', async () => {
    await assert.rejects(resolveConfinedPath({ folder, path: 'missing.txt', field: 'input_data_file' }), {
      status: 'INVALID_ARG',
      message: `input_data_file 'missing.txt': cannot resolve it inside '${folder}': ENOENT: no such file or directory, realpath '${join(folder, 'missing.txt')}'`,
    });
  });

  test('isInside compares resolved paths by segment', () => {
    assert.equal(isInside('/a/b', '/a/b'), true);
    assert.equal(isInside('/a/b', '/a/b/c'), true);
    assert.equal(isInside('/a/b', '/a/bc'), false);
    assert.equal(isInside('/a/b', '/a'), false);
  });
});
