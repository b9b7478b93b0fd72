import assert from 'node:assert/strict';
import { chmodSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { inferJson, outputData } from '../helpers/python-models.js';
import { type TestServer, startTestServer } from '../helpers/server.js';

const MODEL_PY = `
import sys

import numpy as np
import triton_python_backend_utils as pb_utils


class TritonPythonModel:
    def execute(self, requests):
        executable = pb_utils.Tensor("EXECUTABLE", np.array([sys.executable.encode()], dtype=np.object_))
        return [pb_utils.InferenceResponse([executable]) for _ in requests]
`;

/** A Python model folder whose config sets EXECUTION_ENV_PATH (when given). */
function writeModel(repository: string, name: string, envPath?: string): string {
  const dir = join(repository, name);
  mkdirSync(join(dir, '1'), { recursive: true });
  const parameter = envPath === undefined ? '' : `parameters { key: "EXECUTION_ENV_PATH" value: { string_value: "${envPath}" } }\n`;
  writeFileSync(
    join(dir, 'config.pbtxt'),
    `backend: "python"\nmax_batch_size: 0\noutput [ { name: "EXECUTABLE" data_type: TYPE_STRING dims: [ 1 ] } ]\n${parameter}`,
  );
  writeFileSync(join(dir, '1', 'model.py'), MODEL_PY);
  return dir;
}

describe('Python backend: the interpreter of a model (EXECUTION_ENV_PATH)', () => {
  let server: TestServer;
  const repository = mkdtempSync(join(tmpdir(), 'nereid-python-env-'));
  before(async () => {
    writeModel(repository, 'default_python');
    // An environment folder inside the model folder, as Triton's $$TRITON_MODEL_DIRECTORY allows.
    const local = writeModel(repository, 'local_env', '$$TRITON_MODEL_DIRECTORY/env');
    mkdirSync(join(local, 'env', 'bin'), { recursive: true });
    symlinkSync('/usr/bin/python3', join(local, 'env', 'bin', 'python3'));
    // An interpreter that starts without site-packages, so it cannot import numpy.
    const bare = writeModel(repository, 'no_numpy', '$$TRITON_MODEL_DIRECTORY/env');
    mkdirSync(join(bare, 'env', 'bin'), { recursive: true });
    writeFileSync(join(bare, 'env', 'bin', 'python3'), '#!/bin/sh\nexec /usr/bin/python3 -S "$@"\n');
    chmodSync(join(bare, 'env', 'bin', 'python3'), 0o755);
    writeModel(repository, 'packed_env', '$$TRITON_MODEL_DIRECTORY/python3.11.tar.gz');
    writeModel(repository, 'missing_env', '/nonexistent/env');
    // An existing environment outside the model folder: a config cannot pick an interpreter elsewhere.
    writeModel(repository, 'outside_env', '/usr');
    writeModel(repository, 'climbing_env', '$$TRITON_MODEL_DIRECTORY/../local_env/env');
    server = await startTestServer({ modelRepositories: [repository], isStrictReadiness: false });
  });
  after(async () => {
    await server.close();
    rmSync(repository, { recursive: true, force: true });
  });

  const reasonOf = async (name: string): Promise<string> => {
    const index = (await (await server.post('/v2/repository/index', {})).json()) as Array<{ name: string; state: string; reason: string }>;
    const entry = index.find((candidate) => candidate.name === name)!;
    assert.equal(entry.state, 'UNAVAILABLE');
    return entry.reason;
  };

  test('without EXECUTION_ENV_PATH a model runs in /usr/bin/python3', async () => {
    const { json } = await inferJson(server, 'default_python', { inputs: [] });
    assert.deepEqual(outputData(json, 'EXECUTABLE'), ['/usr/bin/python3']);
  });

  test("EXECUTION_ENV_PATH runs the model with that environment's bin/python3", async () => {
    const { json } = await inferJson(server, 'local_env', { inputs: [] });
    assert.deepEqual(outputData(json, 'EXECUTABLE'), [join(repository, 'local_env', 'env', 'bin', 'python3')]);
  });

  test('an interpreter without numpy fails the load, saying what to install', async () => {
    assert.match(
      await reasonOf('no_numpy'),
      /cannot import numpy \(No module named 'numpy'\), which triton_python_backend_utils needs; install python3-numpy \(Debian\) or pip install numpy in the model's environment/,
    );
  });

  test('a packed environment is refused with the command that unpacks it', async () => {
    assert.match(await reasonOf('packed_env'), /EXECUTION_ENV_PATH '\$\$TRITON_MODEL_DIRECTORY\/python3\.11\.tar\.gz' is a packed archive; unpack it/);
  });

  test('an environment outside the model folder is refused, after resolving the path (issue 24)', async () => {
    const hint = "expected a path inside that folder (no '..', no absolute path, no symbolic link that leads out)";
    assert.equal(await reasonOf('outside_env'), `model 'outside_env': EXECUTION_ENV_PATH '/usr' resolves to '/usr', outside '${join(repository, 'outside_env')}'; ${hint}`);
    assert.equal(
      await reasonOf('climbing_env'),
      `model 'climbing_env': EXECUTION_ENV_PATH '${join(repository, 'climbing_env')}/../local_env/env' resolves to '${join(repository, 'local_env', 'env')}', outside '${join(repository, 'climbing_env')}'; ${hint}`,
    );
  });

  test('a missing interpreter fails the load, naming the path it looked for', async () => {
    assert.equal(
      await reasonOf('missing_env'),
      "model 'missing_env': no Python interpreter at '/nonexistent/env/bin/python3' (EXECUTION_ENV_PATH '/nonexistent/env'); install python3 and python3-numpy, or set EXECUTION_ENV_PATH to an environment folder that holds bin/python3",
    );
  });
});
