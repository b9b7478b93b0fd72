// deploy/sagemaker/serve, SageMaker's entry for a Nereid container, run as SageMaker runs it: with the
// SAGEMAKER_* environment, models in the single-model folder, Nereid answering /ping and /invocations.
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { environmentWithout } from '../helpers/environment.js';
import { EXAMPLES } from '../helpers/server.js';

const SERVE = fileURLToPath(new URL('../../deploy/sagemaker/serve', import.meta.url));
const MAIN = fileURLToPath(new URL('../../src/cli/main.ts', import.meta.url));
const INPUT = Array.from({ length: 16 }, (_, index) => index);

function runServe(modelDir: string, env: Record<string, string>): { child: ChildProcess; output: () => string } {
  const child = spawn('bash', [SERVE], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: environmentWithout('SAGEMAKER_', {
      NEREID_COMMAND: `${process.execPath} --import tsx ${MAIN}`,
      NEREID_SAGEMAKER_MODEL_DIR: modelDir,
      SAGEMAKER_BIND_TO_PORT: '0',
      SAGEMAKER_TRITON_LOG_VERBOSE: 'false',
      ...env,
    }),
  });
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  return { child, output: () => output };
}

/** Runs the script and resolves with the SageMaker URL once Nereid listens. */
async function serving(modelDir: string, env: Record<string, string>): Promise<{ url: string; output: () => string; stop: () => Promise<void> }> {
  const { child, output } = runServe(modelDir, env);
  const port = await new Promise<string>((resolve, reject) => {
    child.stderr!.on('data', () => {
      const match = /Started Sagemaker HTTPService at 0\.0\.0\.0:(\d+)/.exec(output());
      if (match !== null) resolve(match[1]!);
    });
    child.once('exit', (code) => reject(new Error(`serve exited with ${code}:\n${output()}`)));
  });
  return {
    url: `http://127.0.0.1:${port}`,
    output,
    stop: async () => {
      child.kill('SIGTERM');
      if (child.exitCode === null) await once(child, 'exit');
    },
  };
}

/** Runs the script, which must stop before starting Nereid; resolves with its exit code and output. */
async function refused(modelDir: string, env: Record<string, string>): Promise<{ code: number; output: string }> {
  const { child, output } = runServe(modelDir, env);
  const [code] = (await once(child, 'exit')) as [number];
  return { code, output: output() };
}

const simpleRequest = JSON.stringify({
  inputs: [
    { name: 'INPUT0', datatype: 'INT32', shape: [1, 16], data: INPUT },
    { name: 'INPUT1', datatype: 'INT32', shape: [1, 16], data: INPUT },
  ],
});

describe('deploy/sagemaker/serve', () => {
  const root = mkdtempSync(join(tmpdir(), 'nereid-sagemaker-serve-'));
  after(() => rmSync(root, { recursive: true, force: true }));
  const modelDir = (name: string, models: string[]): string => {
    const dir = join(root, name);
    mkdirSync(dir);
    for (const model of models) {
      cpSync(join(EXAMPLES, 'simple'), join(dir, model), { recursive: true });
      const config = join(dir, model, 'config.pbtxt');
      writeFileSync(config, readFileSync(config, 'utf8').replace('name: "simple"', `name: "${model}"`));
    }
    return dir;
  };
  const one = modelDir('one', ['sm_model']);
  const two = modelDir('two', ['sm_model', 'other']);

  test('with SAGEMAKER_TRITON_DEFAULT_MODEL_NAME it loads that model and serves /ping and /invocations', async () => {
    const nereid = await serving(two, { SAGEMAKER_TRITON_DEFAULT_MODEL_NAME: 'sm_model' });
    try {
      assert.equal((await fetch(`${nereid.url}/ping`)).status, 200);
      const response = await fetch(`${nereid.url}/invocations`, { method: 'POST', body: simpleRequest, headers: { 'content-type': 'application/json' } });
      assert.equal(response.status, 200);
      assert.equal(((await response.json()) as { model_name: string }).model_name, 'sm_model');
      assert.doesNotMatch(nereid.output(), /Started HTTPService/);
    } finally {
      await nereid.stop();
    }
  });

  test("without it, the only model folder is the default model, with Triton's warning", async () => {
    const nereid = await serving(one, {});
    try {
      assert.match(nereid.output(), /WARNING: No SAGEMAKER_TRITON_DEFAULT_MODEL_NAME provided\.\n {9}Starting with the only existing model directory sm_model/);
      const response = await fetch(`${nereid.url}/invocations`, { method: 'POST', body: simpleRequest });
      assert.equal(((await response.json()) as { model_name: string }).model_name, 'sm_model');
    } finally {
      await nereid.stop();
    }
  });

  test("Triton's refusals, before Nereid starts", async () => {
    const invalidType = await refused(one, { SAGEMAKER_TRITON_INFERENCE_TYPE: 'incorrect_inference_type' });
    assert.equal(invalidType.code, 1);
    assert.equal(invalidType.output, "ERROR: Invalid SAGEMAKER_TRITON_INFERENCE_TYPE 'incorrect_inference_type'\n       Must be one of: infer, generate, generate_stream\n");
    const missing = await refused(one, { SAGEMAKER_TRITON_DEFAULT_MODEL_NAME: 'incorrect_model_name' });
    assert.equal(missing.output, 'ERROR: Directory with provided SAGEMAKER_TRITON_DEFAULT_MODEL_NAME incorrect_model_name does not exist\n');
    const several = await refused(two, {});
    assert.equal(
      several.output,
      'ERROR: More than 1 model directory found in model repository.\n' +
        '       Either provide a single directory or set SAGEMAKER_TRITON_DEFAULT_MODEL_NAME to run the ensemble backend.\n' +
        '       Directories found in model repository: other sm_model\n',
    );
    const none = await refused(modelDir('none', []), {});
    assert.equal(none.output, 'ERROR: No model found in model repository\n');
    const flat = await refused(join(one, 'sm_model'), {});
    assert.equal(flat.output, 'ERROR: Incorrect directory structure.\n       Model directory needs to contain the top level folder\n');
  });

  test('SAGEMAKER_MULTI_MODEL=true serves the multi-model endpoint from NEREID_SAGEMAKER_MME_ROOT, pinging liveness', async () => {
    const nereid = await serving(one, { SAGEMAKER_MULTI_MODEL: 'true', NEREID_SAGEMAKER_MME_ROOT: root });
    try {
      assert.match(nereid.output(), /Triton is running in SageMaker MME mode\. Using Triton ping mode: "live"/);
      assert.equal((await fetch(`${nereid.url}/ping`)).status, 200);
      const loaded = await fetch(`${nereid.url}/models`, { method: 'POST', body: JSON.stringify({ model_name: 'sm_model', url: join(one, 'sm_model') }) });
      assert.equal(loaded.status, 200, await loaded.text());
      const response = await fetch(`${nereid.url}/models/sm_model/invoke`, { method: 'POST', body: simpleRequest });
      assert.equal(((await response.json()) as { model_name: string }).model_name, 'sm_model');
    } finally {
      await nereid.stop();
    }
  });
});
