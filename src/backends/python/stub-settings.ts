import { stat } from 'node:fs/promises';
import { delimiter, join, resolve } from 'node:path';
import type { ModelConfig } from '../../protocol/gen/model_config_pb.js';
import { resolveConfinedPath } from '../../kernel/confined-path.js';
import { NereidError } from '../../kernel/errors.js';

/** The interpreter a Python model runs in when its config names no EXECUTION_ENV_PATH (Debian's, with python3-numpy). */
export const DEFAULT_PYTHON = '/usr/bin/python3';
/** Triton's `stub-timeout-seconds` default. */
const DEFAULT_STUB_TIMEOUT_SECONDS = 30;

/** How the Python processes of one model are started and watched. */
export interface StubSettings {
  readonly pythonPath: string;
  readonly env: NodeJS.ProcessEnv;
  /** A serving process that answers no health check for this long is taken as hung, killed and restarted. */
  readonly healthTimeoutMs: number;
}

const isExecutableFile = (path: string): Promise<boolean> =>
  stat(path).then(
    (info) => info.isFile() && (info.mode & 0o111) !== 0,
    () => false,
  );

/**
 * Reads the model config parameters that shape its Python processes:
 *
 * - `EXECUTION_ENV_PATH` (Triton's name): an unpacked environment folder (a virtualenv, or a conda-pack
 *   archive extracted) whose `bin/python3` runs the model, with its `bin/` first on PATH. As in
 *   Triton, `$$TRITON_MODEL_DIRECTORY` stands for the model folder. Packed `.tar.gz` archives are
 *   refused: Nereid does not unpack them. The folder must lie inside the model folder (after resolving
 *   symbolic links), so a config cannot run an interpreter elsewhere; its `bin/python3` may be a link.
 * - `STUB_TIMEOUT_SECONDS` (after Triton's `stub-timeout-seconds`, default 30): how long a serving
 *   process may leave a health check unanswered before it counts as hung.
 */
export async function readStubSettings(config: ModelConfig, modelDir: string): Promise<StubSettings> {
  const where = `model '${config.name}'`;
  const envParameter = config.parameters.EXECUTION_ENV_PATH?.stringValue;
  let pythonPath = DEFAULT_PYTHON;
  let env: NodeJS.ProcessEnv = { ...process.env };
  if (envParameter !== undefined && envParameter !== '') {
    const envPath = envParameter.replaceAll('$$TRITON_MODEL_DIRECTORY', modelDir);
    const envDir = resolve(modelDir, envPath);
    if (/\.(tar\.gz|tgz|tar)$/.test(envDir)) {
      throw new NereidError(
        'INVALID_ARG',
        `${where}: EXECUTION_ENV_PATH '${envParameter}' is a packed archive; unpack it (mkdir env && tar -xzf ${envParameter} -C env) and point EXECUTION_ENV_PATH at the folder`,
      );
    }
    // An environment that exists must be the model's own; a missing one fails below, naming the interpreter.
    if (await stat(envDir).then(() => true, () => false)) {
      await resolveConfinedPath({ folder: modelDir, path: envPath, field: `${where}: EXECUTION_ENV_PATH` });
    }
    pythonPath = join(envDir, 'bin', 'python3');
    env = { ...env, PATH: `${join(envDir, 'bin')}${delimiter}${process.env.PATH ?? ''}`, VIRTUAL_ENV: envDir };
  }
  if (!(await isExecutableFile(pythonPath))) {
    const origin = pythonPath === DEFAULT_PYTHON ? 'the default interpreter' : `EXECUTION_ENV_PATH '${envParameter}'`;
    throw new NereidError(
      'INVALID_ARG',
      `${where}: no Python interpreter at '${pythonPath}' (${origin}); install python3 and python3-numpy, or set EXECUTION_ENV_PATH to an environment folder that holds bin/python3`,
    );
  }
  return { pythonPath, env, healthTimeoutMs: readTimeoutMs(config, where) };
}

function readTimeoutMs(config: ModelConfig, where: string): number {
  const text = config.parameters.STUB_TIMEOUT_SECONDS?.stringValue;
  if (text === undefined || text === '') return DEFAULT_STUB_TIMEOUT_SECONDS * 1000;
  const seconds = Number(text);
  if (!Number.isFinite(seconds) || seconds <= 0) {
    throw new NereidError('INVALID_ARG', `${where}: parameter STUB_TIMEOUT_SECONDS must be a positive number of seconds, got '${text}'`);
  }
  return seconds * 1000;
}
