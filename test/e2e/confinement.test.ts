import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { cpSync, existsSync, mkdtempSync, readFileSync, readdirSync, realpathSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, test } from 'node:test';
import { type ServiceError, credentials, status } from '@grpc/grpc-js';
import { loadGrpcServices } from '../helpers/plain-grpc-clients.js';
import { EXAMPLES, FIXTURES, type TestServer, startTestServer } from '../helpers/server.js';
import { simpleConfig } from '../helpers/simple-model.js';

const JS_REPOSITORY = fileURLToPath(new URL('../fixtures/js_repository', import.meta.url));
const OUTSIDE_HINT = "expected a path inside that folder (no '..', no absolute path, no symbolic link that leads out)";
const CODE_HINT = 'code uploads are off: start the server with --allow-model-code-upload=true to allow them';

/** Every file below `dir` with the SHA-256 of its bytes (links as their target), to prove nothing changed. */
function fingerprint(dir: string): Record<string, string> {
  const files: Record<string, string> = {};
  const walk = (folder: string): void => {
    for (const entry of readdirSync(folder, { withFileTypes: true })) {
      const path = join(folder, entry.name);
      if (entry.isDirectory()) walk(path);
      else files[relative(dir, path)] = entry.isSymbolicLink() ? `link ${path}` : createHash('sha256').update(readFileSync(path)).digest('hex');
    }
  };
  walk(dir);
  return files;
}

/** The private folders of load requests that hold a model folder of this name (the name is unique to a test). */
const privateFoldersOf = (modelName: string): string[] =>
  readdirSync(tmpdir()).filter((name) => name.startsWith('nereid-model-') && existsSync(join(tmpdir(), name, modelName)));

const errorOf = async (response: Response): Promise<{ status: number; error: string }> => ({
  status: response.status,
  error: ((await response.json()) as { error: string }).error,
});

const jsAddConfig = (name: string, extra: Record<string, unknown> = {}) => ({
  name,
  backend: 'javascript',
  max_batch_size: 8,
  input: ['INPUT0', 'INPUT1'].map((input) => ({ name: input, data_type: 'TYPE_FP32', dims: [4] })),
  output: ['OUTPUT0', 'OUTPUT1'].map((output) => ({ name: output, data_type: 'TYPE_FP32', dims: [4] })),
  ...extra,
});
const jsAddSource = readFileSync(join(JS_REPOSITORY, 'js_add', '1', 'model.js')).toString('base64');
const jsAddRequest = {
  inputs: [
    { name: 'INPUT0', datatype: 'FP32', shape: [1, 4], data: [1, 2, 3, 4] },
    { name: 'INPUT1', datatype: 'FP32', shape: [1, 4], data: [10, 20, 30, 40] },
  ],
};

describe('confinement: names, config paths and load files stay inside their folders (issue 24)', () => {
  let server: TestServer;
  // The user's repository, and a folder beside it that a traversal would reach.
  const base = realpathSync(mkdtempSync(join(tmpdir(), 'nereid-confine-')));
  const repository = join(base, 'repository');
  const onnx = readFileSync(join(EXAMPLES, 'simple', '1', 'model.onnx')).toString('base64');
  let before_: Record<string, string>;
  before(async () => {
    for (const model of ['simple', 'digits']) cpSync(join(EXAMPLES, model), join(repository, model), { recursive: true });
    for (const model of ['custom_filename', 'warmup_ok']) cpSync(join(FIXTURES, model), join(repository, model), { recursive: true });
    cpSync(join(EXAMPLES, 'digits'), join(repository, 'digits_linked'), { recursive: true });
    writeFileSync(join(repository, 'digits_linked', 'config.pbtxt'), readFileSync(join(EXAMPLES, 'digits', 'config.pbtxt'), 'utf8').replace('name: "digits"', 'name: "digits_linked"'));
    rmSync(join(repository, 'digits_linked', 'labels.txt'));
    symlinkSync('/etc/passwd', join(repository, 'digits_linked', 'labels.txt'));
    before_ = fingerprint(repository);
    server = await startTestServer({ modelRepositories: [repository], modelControlMode: 'explicit', startupModels: ['simple'] });
  });
  after(async () => {
    await server.close();
    rmSync(base, { recursive: true, force: true });
  });

  test('a load whose name climbs out of the repository writes nothing, outside or inside it', async () => {
    const config = JSON.stringify(simpleConfig('simple', 8));
    // A bare '..' segment never reaches the server over HTTP (URLs resolve it); gRPC sends it below.
    const names = ['../escaped', '../../escaped', `..${join(repository, 'simple')}`, '../repository/simple', 'simple/../simple', '../simple'];
    for (const name of names) {
      const response = await server.post(`/v2/repository/models/${encodeURIComponent(name)}/load`, { parameters: { config, 'file:1/model.onnx': onnx } });
      assert.deepEqual(await errorOf(response), {
        status: 400,
        error: `invalid model name '${name}', model name must not contain path traversal characters`,
      });
    }
    assert.deepEqual(readdirSync(base), ['repository'], 'nothing is written beside the repository');
    assert.equal(existsSync(join(tmpdir(), 'escaped')), false);
    assert.deepEqual(fingerprint(repository), before_, "the user's repository is unchanged, byte for byte");
  });

  test('names with a path separator or only whitespace are refused on load and unload, over HTTP', async () => {
    const cases: Array<[string, string, string]> = [
      ['simple/1', "a model name cannot contain a path separator ('/' or '\\')", "invalid model name 'simple/1', model name must not contain path traversal characters"],
      ['a\\b', "a model name cannot contain a path separator ('/' or '\\')", "failed to load 'a\\b', failed to poll from model repository; a model name cannot contain a path separator ('/' or '\\')"],
      ['  ', 'a model name cannot be only whitespace', 'model name must not contain only whitespace characters'],
    ];
    for (const [name, reason, loadError] of cases) {
      assert.deepEqual(await errorOf(await server.post(`/v2/repository/models/${encodeURIComponent(name)}/load`, '')), { status: 400, error: loadError });
      assert.deepEqual(await errorOf(await server.post(`/v2/repository/models/${encodeURIComponent(name)}/unload`, '')), {
        status: 400,
        error: `failed to unload '${name}': Request for unknown model: '${name}' is not found; ${reason}`,
      });
    }
    // Triton unloads nothing and answers success for a name no repository holds.
    assert.equal((await server.post('/v2/repository/models/nope/unload', '')).status, 200);
  });

  test('gRPC RepositoryModelLoad and Unload refuse the same names with the same messages', async () => {
    const Client = loadGrpcServices().inference;
    const client = new Client(server.grpcUrl!, credentials.createInsecure()) as unknown as Record<string, (request: object, callback: (error: ServiceError | null) => void) => void> & { close(): void };
    const call = (method: 'RepositoryModelLoad' | 'RepositoryModelUnload', request: object): Promise<{ code: number; details: string }> =>
      new Promise((resolve) => {
        client[method]!(request, (error) => resolve(error === null ? { code: status.OK, details: '' } : { code: error.code, details: error.details }));
      });
    try {
      const file = { bytes_param: Buffer.from(onnx, 'base64') };
      const config = { string_param: JSON.stringify(simpleConfig('simple', 8)) };
      assert.deepEqual(await call('RepositoryModelLoad', { model_name: '../escaped', parameters: { config, 'file:1/model.onnx': file } }), {
        code: status.INVALID_ARGUMENT,
        details: "invalid model name '../escaped', model name must not contain path traversal characters",
      });
      assert.deepEqual(await call('RepositoryModelLoad', { model_name: '' }), {
        code: status.INVALID_ARGUMENT,
        details: 'model name must not be empty',
      });
      assert.deepEqual(await call('RepositoryModelLoad', { model_name: '..' }), {
        code: status.INVALID_ARGUMENT,
        details: "invalid model name '..', model name must not contain path traversal characters",
      });
      assert.deepEqual(await call('RepositoryModelUnload', { model_name: 'a/b' }), {
        code: status.INVALID_ARGUMENT,
        details: "failed to unload 'a/b': Request for unknown model: 'a/b' is not found; a model name cannot contain a path separator ('/' or '\\')",
      });
    } finally {
      client.close();
    }
    assert.deepEqual(readdirSync(base), ['repository']);
    assert.deepEqual(fingerprint(repository), before_);
  });

  test('a label_filename that climbs out of the model folder is refused, and so is a labels.txt linked out', async () => {
    const config = {
      name: 'digits',
      platform: 'onnxruntime_onnx',
      max_batch_size: 32,
      input: [{ name: 'INPUT', data_type: 'TYPE_FP32', dims: [64] }],
      output: [{ name: 'PROBABILITIES', data_type: 'TYPE_FP32', dims: [10], label_filename: '../../../../../../../../etc/passwd' }],
    };
    assert.deepEqual(await errorOf(await server.post('/v2/repository/models/digits/load', { parameters: { config: JSON.stringify(config) } })), {
      status: 400,
      error: `load failed for model 'digits': version 1 is at UNAVAILABLE state: model 'digits': label_filename '../../../../../../../../etc/passwd' resolves to '/etc/passwd', outside '${join(repository, 'digits')}'; ${OUTSIDE_HINT};\n`,
    });
    assert.deepEqual(await errorOf(await server.post('/v2/repository/models/digits_linked/load', '')), {
      status: 400,
      error: `load failed for model 'digits_linked': version 1 is at UNAVAILABLE state: model 'digits_linked': label_filename 'labels.txt' resolves to '/etc/passwd', outside '${join(repository, 'digits_linked')}'; ${OUTSIDE_HINT};\n`,
    });
    assert.equal((await server.post('/v2/repository/models/digits/load', '')).status, 200, 'its own labels.txt still loads');
  });

  test('a default_model_filename or a warmup input_data_file that climbs out is refused', async () => {
    const doubler = {
      name: 'custom_filename',
      platform: 'onnxruntime_onnx',
      max_batch_size: 0,
      input: [{ name: 'INPUT0', data_type: 'TYPE_FP32', dims: [-1, -1] }],
      output: [{ name: 'OUTPUT0', data_type: 'TYPE_FP32', dims: [-1, -1] }],
      default_model_filename: '../../simple/1/model.onnx',
    };
    assert.deepEqual(await errorOf(await server.post('/v2/repository/models/custom_filename/load', { parameters: { config: JSON.stringify(doubler) } })), {
      status: 400,
      error: `load failed for model 'custom_filename': model 'custom_filename' version 1: default_model_filename '../../simple/1/model.onnx' resolves to '${join(repository, 'simple', '1', 'model.onnx')}', outside '${join(repository, 'custom_filename', '1')}'; ${OUTSIDE_HINT}\n`,
    });
    const warmup = {
      name: 'warmup_ok',
      platform: 'onnxruntime_onnx',
      max_batch_size: 4,
      input: [{ name: 'INPUT0', data_type: 'TYPE_FP32', dims: [4] }],
      output: [{ name: 'OUTPUT0', data_type: 'TYPE_FP32', dims: [4] }],
      model_warmup: [{ name: 'from_file', batch_size: 1, inputs: { INPUT0: { data_type: 'TYPE_FP32', dims: [4], input_data_file: '../../simple/config.pbtxt' } } }],
    };
    assert.deepEqual(await errorOf(await server.post('/v2/repository/models/warmup_ok/load', { parameters: { config: JSON.stringify(warmup) } })), {
      status: 400,
      error: `load failed for model 'warmup_ok': version 1 is at UNAVAILABLE state: model 'warmup_ok': warmup sample 'from_file': input_data_file '../../simple/config.pbtxt' resolves to '${join(repository, 'simple', 'config.pbtxt')}', outside '${join(repository, 'warmup_ok', 'warmup')}'; ${OUTSIDE_HINT};\n`,
    });
    assert.deepEqual(fingerprint(repository), before_);
  });

  test('a refused upload leaves no private folder behind; an accepted one never writes into the repository', async () => {
    const config = JSON.stringify(simpleConfig('confine_refused_probe', 8));
    // Written, then refused by the load: the config names an input the model does not have.
    const wrong = JSON.stringify({ ...simpleConfig('confine_refused_probe', 8), input: [{ name: 'NOPE', data_type: 'TYPE_INT32', dims: [16] }] });
    assert.equal((await server.post('/v2/repository/models/confine_refused_probe/load', { parameters: { config: wrong, 'file:1/model.onnx': onnx } })).status, 400);
    assert.deepEqual(privateFoldersOf('confine_refused_probe'), []);
    const accepted = await server.post('/v2/repository/models/confine_refused_probe/load', { parameters: { config, 'file:1/model.onnx': onnx } });
    assert.equal(accepted.status, 200, await accepted.clone().text());
    const [folder] = privateFoldersOf('confine_refused_probe');
    assert.ok(folder !== undefined && statSync(join(tmpdir(), folder, 'confine_refused_probe', '1', 'model.onnx')).isFile(), 'the files live in a private temporary folder');
    assert.equal((await server.post('/v2/repository/models/confine_refused_probe/unload', '')).status, 200);
    assert.deepEqual(privateFoldersOf('confine_refused_probe'), []);
    assert.deepEqual(fingerprint(repository), before_);
  });

  test('code uploads are refused without --allow-model-code-upload, by file ending and by backend', async () => {
    for (const path of ['1/model.js', '1/model.py', '1/helper.mjs', '1/libcustom.so', '1/addon.node', '1/model.pt']) {
      const response = await server.post('/v2/repository/models/confine_code_probe/load', { parameters: { config: JSON.stringify(jsAddConfig('confine_code_probe')), [`file:${path}`]: jsAddSource } });
      const ending = path.slice(path.lastIndexOf('.'));
      assert.deepEqual(await errorOf(response), {
        status: 400,
        error: `load parameter 'file:${path}' is code (${ending}), which a backend would run as the server's user; ${CODE_HINT}`,
      });
    }
    // A code backend pointed at a file with an innocent ending is refused too, and its folder removed.
    const disguised = jsAddConfig('confine_code_probe', { default_model_filename: 'model.txt' });
    assert.deepEqual(await errorOf(await server.post('/v2/repository/models/confine_code_probe/load', { parameters: { config: JSON.stringify(disguised), 'file:1/model.txt': jsAddSource } })), {
      status: 400,
      error: `load failed for model 'confine_code_probe': model 'confine_code_probe': backend 'javascript' runs its model files as code, and these came from the load request; ${CODE_HINT}\n`,
    });
    assert.deepEqual(privateFoldersOf('confine_code_probe'), []);
    assert.equal((await server.get('/v2/models/confine_code_probe/ready')).status, 400);
  });
});

describe('code uploads with --allow-model-code-upload=true', () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer({ modelRepositories: [EXAMPLES], modelControlMode: 'explicit', isModelCodeUploadAllowed: true });
  });
  after(() => server.close());

  test('a JavaScript model uploaded with its config loads and serves, from a private folder', async () => {
    const load = await server.post('/v2/repository/models/confine_allowed_probe/load', {
      parameters: { config: JSON.stringify(jsAddConfig('confine_allowed_probe')), 'file:1/model.js': jsAddSource },
    });
    assert.equal(load.status, 200, await load.clone().text());
    const infer = await server.post('/v2/models/confine_allowed_probe/infer', jsAddRequest);
    assert.deepEqual(((await infer.json()) as { outputs: Array<{ data: number[] }> }).outputs.map((output) => output.data), [
      [11, 22, 33, 44],
      [-9, -18, -27, -36],
    ]);
    assert.equal(privateFoldersOf('confine_allowed_probe').length, 1);
    assert.equal(existsSync(join(EXAMPLES, 'confine_allowed_probe')), false);
    assert.equal((await server.post('/v2/repository/models/confine_allowed_probe/unload', '')).status, 200);
    assert.deepEqual(privateFoldersOf('confine_allowed_probe'), []);
  });
});
