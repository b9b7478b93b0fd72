import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { HAS_TORCH, inferJson, outputData } from '../helpers/python-models.js';
import { EXAMPLES, type TestServer, binaryBody, bytesOf, readInferResponse, startTestServer } from '../helpers/server.js';

const SKIP = !HAS_TORCH && 'torch is not installed for /usr/bin/python3 (apt-get install python3-torch)';

/** TorchScript models for the naming conventions, written by torch itself into `<repository>/<model>/1/model.pt`. */
const MAKE_MODELS = `
import sys
from typing import Dict, List, Tuple

import torch

repository = sys.argv[1]


class ForwardArguments(torch.nn.Module):
    def forward(self, scale, offset):
        return scale * 2.0, offset - scale


class ConfigOrder(torch.nn.Module):
    def forward(self, a, b):
        return a - b


class DictInput(torch.nn.Module):
    def forward(self, inputs: Dict[str, torch.Tensor]):
        return inputs["x"] * inputs["y"]


class Words(torch.nn.Module):
    def forward(self, words: List[str]) -> Tuple[torch.Tensor, List[str]]:
        return torch.tensor([len(word) for word in words]), [word.upper() for word in words]


for name, module in [("forward_arguments", ForwardArguments()), ("config_order", ConfigOrder()),
                     ("dict_input", DictInput()), ("wrong_count", ConfigOrder()), ("words", Words())]:
    torch.jit.save(torch.jit.script(module), f"{repository}/{name}/1/model.pt")
`;

const CONFIGS: Record<string, string> = {
  // Inputs named like forward()'s arguments, listed in the other order; outputs by <name>__<index>, also swapped.
  forward_arguments: `
platform: "pytorch_libtorch"
input [ { name: "offset" data_type: TYPE_FP32 dims: [ 2 ] }, { name: "scale" data_type: TYPE_FP32 dims: [ 2 ] } ]
output [ { name: "DIFF__1" data_type: TYPE_FP32 dims: [ 2 ] }, { name: "DOUBLE__0" data_type: TYPE_FP32 dims: [ 2 ] } ]`,
  // Names that follow neither convention: config order.
  config_order: `
platform: "pytorch_libtorch"
input [ { name: "first" data_type: TYPE_INT64 dims: [ 3 ] }, { name: "second" data_type: TYPE_INT64 dims: [ 3 ] } ]
output [ { name: "difference" data_type: TYPE_INT64 dims: [ 3 ] } ]`,
  dict_input: `
platform: "pytorch_libtorch"
input [ { name: "x" data_type: TYPE_FP64 dims: [ 2 ] }, { name: "y" data_type: TYPE_FP64 dims: [ 2 ] } ]
output [ { name: "OUTPUT__0" data_type: TYPE_FP64 dims: [ 2 ] } ]`,
  // BYTES in and out, as Triton's libtorch backend passes them: List[str].
  words: `
platform: "pytorch_libtorch"
input [ { name: "WORDS__0" data_type: TYPE_STRING dims: [ -1 ] } ]
output [ { name: "LENGTHS__0" data_type: TYPE_INT64 dims: [ -1 ] }, { name: "UPPER__1" data_type: TYPE_STRING dims: [ -1 ] } ]`,
  wrong_count: `
platform: "pytorch_libtorch"
input [ { name: "INPUT__0" data_type: TYPE_FP32 dims: [ 1 ] } ]
output [ { name: "OUTPUT__0" data_type: TYPE_FP32 dims: [ 1 ] } ]`,
  not_torchscript: `
platform: "pytorch_libtorch"
input [ { name: "INPUT__0" data_type: TYPE_FP32 dims: [ 1 ] } ]
output [ { name: "OUTPUT__0" data_type: TYPE_FP32 dims: [ 1 ] } ]`,
  // An interpreter where "import torch" fails, as on a machine without python3-torch.
  no_torch: `
platform: "pytorch_libtorch"
input [ { name: "INPUT__0" data_type: TYPE_FP32 dims: [ 1 ] } ]
output [ { name: "OUTPUT__0" data_type: TYPE_FP32 dims: [ 1 ] } ]
parameters { key: "EXECUTION_ENV_PATH" value: { string_value: "$$TRITON_MODEL_DIRECTORY/env" } }`,
};

/** Runs torch on the digits_torch model and returns its float32 outputs for the images. */
function torchReference(images: readonly number[][]): Buffer {
  const script = `
import sys, numpy as np, torch
images = np.frombuffer(sys.stdin.buffer.read(), dtype=np.float32).reshape(-1, 64)
module = torch.jit.load(sys.argv[1])
with torch.no_grad():
    sys.stdout.buffer.write(module(torch.from_numpy(images.copy())).numpy().astype(np.float32).tobytes())
`;
  const result = spawnSync('/usr/bin/python3', ['-c', script, join(EXAMPLES, 'digits_torch', '1', 'model.pt')], { input: bytesOf(new Float32Array(images.flat())) });
  assert.equal(result.status, 0, result.stderr.toString());
  return result.stdout;
}

describe('platform pytorch_libtorch: TorchScript through the Python runtime', () => {
  let server: TestServer;
  const repository = mkdtempSync(join(tmpdir(), 'nereid-pytorch-'));
  before(async () => {
    for (const [name, config] of Object.entries(CONFIGS)) {
      mkdirSync(join(repository, name, '1'), { recursive: true });
      writeFileSync(join(repository, name, 'config.pbtxt'), `max_batch_size: 0${config}\n`);
    }
    writeFileSync(join(repository, 'not_torchscript', '1', 'model.pt'), 'not a TorchScript archive');
    writeFileSync(join(repository, 'no_torch', '1', 'model.pt'), '');
    mkdirSync(join(repository, 'no_torch', 'env', 'bin'), { recursive: true });
    mkdirSync(join(repository, 'no_torch', 'env', 'shadow', 'torch'), { recursive: true });
    writeFileSync(join(repository, 'no_torch', 'env', 'shadow', 'torch', '__init__.py'), 'raise ImportError("No module named \'torch\'")\n');
    const python = join(repository, 'no_torch', 'env', 'bin', 'python3');
    writeFileSync(python, `#!/bin/sh\nPYTHONPATH=${join(repository, 'no_torch', 'env', 'shadow')} exec /usr/bin/python3 "$@"\n`);
    chmodSync(python, 0o755);
    if (HAS_TORCH) {
      // torch.jit.script reads the classes' source, so the script must be a file.
      writeFileSync(join(repository, 'make_models.py'), MAKE_MODELS);
      const made = spawnSync('/usr/bin/python3', [join(repository, 'make_models.py'), repository]);
      assert.equal(made.status, 0, made.stderr.toString());
    }
    server = await startTestServer({ modelRepositories: [repository, EXAMPLES], modelControlMode: 'explicit', startupModels: ['digits_torch', ...Object.keys(CONFIGS)], isStrictReadiness: false });
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

  test('digits_torch (examples) gives exactly what torch gives for the same batch', { skip: SKIP }, async () => {
    const { images, labels } = JSON.parse(readFileSync(new URL('../fixtures/digits_samples.json', import.meta.url), 'utf8')) as { images: number[][]; labels: number[] };
    const { body, headers } = binaryBody(
      {
        inputs: [{ name: 'INPUT__0', shape: [images.length, 64], datatype: 'FP32', parameters: { binary_data_size: images.length * 256 } }],
        outputs: [{ name: 'OUTPUT__0', parameters: { binary_data: true } }],
      },
      [bytesOf(new Float32Array(images.flat()))],
    );
    const response = await server.post('/v2/models/digits_torch/infer', body, { headers });
    assert.equal(response.status, 200);
    const { json, binary } = await readInferResponse(response);
    assert.deepEqual(json.outputs[0]!.shape, [images.length, 10]);
    assert.deepEqual(binary, torchReference(images));
    const probabilities = new Float32Array(new Uint8Array(binary).buffer);
    const predicted = images.map((_, row) => {
      const scores = [...probabilities.subarray(row * 10, row * 10 + 10)];
      return scores.indexOf(Math.max(...scores));
    });
    assert.deepEqual(predicted, labels);
  });

  test('requests the dynamic batcher gathers run as one forward() call and are answered each with its own rows', { skip: SKIP }, async () => {
    const { images, labels } = JSON.parse(readFileSync(new URL('../fixtures/digits_samples.json', import.meta.url), 'utf8')) as { images: number[][]; labels: number[] };
    const answers = await Promise.all(
      images.map((image) => inferJson(server, 'digits_torch', { inputs: [{ name: 'INPUT__0', shape: [1, 64], datatype: 'FP32', data: image }] })),
    );
    const predicted = answers.map(({ json }) => {
      const scores = outputData(json, 'OUTPUT__0') as number[];
      return scores.indexOf(Math.max(...scores));
    });
    assert.deepEqual(predicted, labels);
  });

  test("inputs named like forward()'s arguments go to those arguments; OUTPUT__<n> names pick the result", { skip: SKIP }, async () => {
    const { status, json } = await inferJson(server, 'forward_arguments', {
      inputs: [
        { name: 'offset', shape: [2], datatype: 'FP32', data: [10, 20] },
        { name: 'scale', shape: [2], datatype: 'FP32', data: [1, 2] },
      ],
    });
    assert.equal(status, 200, JSON.stringify(json));
    assert.deepEqual(outputData(json, 'DOUBLE__0'), [2, 4]);
    assert.deepEqual(outputData(json, 'DIFF__1'), [9, 18]);
  });

  test('other names follow the config order; a Dict[str, Tensor] forward() gets every input by name', { skip: SKIP }, async () => {
    const ordered = await inferJson(server, 'config_order', {
      inputs: [
        { name: 'second', shape: [3], datatype: 'INT64', data: [1, 2, 3] },
        { name: 'first', shape: [3], datatype: 'INT64', data: [10, 10, 10] },
      ],
    });
    assert.equal(ordered.status, 200, JSON.stringify(ordered.json));
    assert.deepEqual(outputData(ordered.json, 'difference'), [9, 8, 7]);
    const dict = await inferJson(server, 'dict_input', {
      inputs: [
        { name: 'x', shape: [2], datatype: 'FP64', data: [1.5, 2] },
        { name: 'y', shape: [2], datatype: 'FP64', data: [4, 0.25] },
      ],
    });
    assert.equal(dict.status, 200, JSON.stringify(dict.json));
    assert.deepEqual(outputData(dict.json, 'OUTPUT__0'), [6, 0.5]);
  });

  test("BYTES inputs reach forward() as List[str] and a List[str] result is a BYTES output, as in Triton's libtorch backend", { skip: SKIP }, async () => {
    const { status, json } = await inferJson(server, 'words', { inputs: [{ name: 'WORDS__0', shape: [3], datatype: 'BYTES', data: ['triton', 'nereid', 'py'] }] });
    assert.equal(status, 200, JSON.stringify(json));
    assert.deepEqual(json.outputs, [
      { name: 'LENGTHS__0', datatype: 'INT64', shape: [3], data: [6, 6, 2] },
      { name: 'UPPER__1', datatype: 'BYTES', shape: [3], data: ['TRITON', 'NEREID', 'PY'] },
    ]);
  });

  test('a config that does not fit the TorchScript model, or a file that is not one, fails the load with the reason', { skip: SKIP }, async () => {
    assert.match(await reasonOf('wrong_count'), /model 'wrong_count': configuration expects 1 input\(s\), but forward\(\) of the TorchScript model takes 2: a, b/);
    assert.match(await reasonOf('not_torchscript'), /torch\.jit\.load cannot read '.*not_torchscript\/1\/model\.pt' as TorchScript/);
  });

  test('without torch the model fails to load, saying what to install', async () => {
    assert.match(
      await reasonOf('no_torch'),
      /initialize\(\) failed: TritonModelException: platform 'pytorch_libtorch' needs PyTorch, but the Python interpreter '.*' cannot import torch \(No module named 'torch'\); install python3-torch \(Debian\) or pip install torch/,
    );
  });
});
