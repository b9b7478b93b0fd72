import assert from 'node:assert/strict';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { refuseCodeFiles, removeOverrideFolder, writeOverrideFiles } from './load-override.js';

const bytes = new Uint8Array([1, 2, 3]);
const foldersOf = (modelName: string): string[] => readdirSync(tmpdir()).filter((name) => name.startsWith('nereid-model-') && existsSync(join(tmpdir(), name, modelName)));

test('files go to a private folder of their own, removed with the model', async () => {
  const modelDir = await writeOverrideFiles('override_unit_probe', new Map([['1/model.onnx', bytes], ['1/sub/extra.bin', bytes]]));
  assert.ok(modelDir.startsWith(join(tmpdir(), 'nereid-model-')));
  assert.deepEqual([...readFileSync(join(modelDir, '1', 'sub', 'extra.bin'))], [1, 2, 3]);
  await removeOverrideFolder(modelDir);
  assert.deepEqual(foldersOf('override_unit_probe'), []);
});

test('paths outside a version folder are refused before anything is written', async () => {
  for (const path of ['1/', '1', 'model.onnx', '../x/1/model.onnx', '/tmp/1/model.onnx', '1/../../model.onnx', '01/model.onnx']) {
    await assert.rejects(writeOverrideFiles('override_unit_refused', new Map([[path, bytes]])), {
      status: 'INVALID_ARG',
      message: `load parameter 'file:${path}' is not a file inside a version folder of the model; expected 'file:<version>/<name>', e.g. 'file:1/model.onnx', with no '..' and no absolute path`,
    });
  }
  assert.deepEqual(foldersOf('override_unit_refused'), []);
});

test('paths the file system cannot hold, or that clash with each other, are refused and leave nothing behind (found by test/fuzz: 500)', async () => {
  const cases: Array<[Array<[string, Uint8Array]>, string]> = [
    [[['1/a', bytes], ['1/a/b', bytes]], "load parameter 'file:1/a/b' cannot be written: another load parameter is a file where this path needs a folder"],
    [[['1/a/b', bytes], ['1/a', bytes]], "load parameter 'file:1/a' cannot be written: other load parameters make a folder of this path"],
    [[[`1/${'x'.repeat(256)}`, bytes]], `load parameter 'file:1/${'x'.repeat(256)}' cannot be written: a name in its path is longer than the file system allows (255 bytes)`],
  ];
  for (const [files, message] of cases) {
    await assert.rejects(writeOverrideFiles('override_unit_clash', new Map(files)), { status: 'INVALID_ARG', message });
  }
  assert.deepEqual(foldersOf('override_unit_clash'), []);
});

test('code files are refused by their ending, data files pass', () => {
  refuseCodeFiles(new Map([['1/model.onnx', bytes], ['1/weights.bin', bytes], ['1/labels.txt', bytes]]));
  assert.throws(() => refuseCodeFiles(new Map([['1/model.onnx', bytes], ['1/Model.PY', bytes]])), {
    status: 'INVALID_ARG',
    message: "load parameter 'file:1/Model.PY' is code (.PY), which a backend would run as the server's user; code uploads are off: start the server with --allow-model-code-upload=true to allow them",
  });
});
