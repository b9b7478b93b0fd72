import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { isAbsolute, join, normalize, relative, sep } from 'node:path';
import { NereidError } from '../kernel/errors.js';

/** What a load request may replace (Triton's load parameters `config` and `file:<version>/<name>`). */
export interface LoadOverride {
  /** A model configuration as JSON, used instead of config.pbtxt. */
  readonly configJson?: string;
  /** Model files by their path inside the model folder, e.g. `1/model.onnx`. */
  readonly files: ReadonlyMap<string, Uint8Array>;
}

const PRIVATE_PREFIX = join(tmpdir(), 'nereid-model-');

/** Removes a model folder writeOverrideFiles made (and its private parent); leaves any other folder alone. */
export async function removeOverrideFolder(modelDir: string): Promise<void> {
  const parent = join(modelDir, '..');
  if (parent.startsWith(PRIVATE_PREFIX)) await rm(parent, { recursive: true, force: true });
}

/**
 * Writes a load request's files into a new private folder (`<tmp>/nereid-model-XXXX/<model>`) and
 * returns the model folder. Every path must stay inside it: relative, no `..`, starting with a
 * version folder (`1/model.onnx`); nothing is ever written into the user's repository.
 */
export async function writeOverrideFiles(modelName: string, files: ReadonlyMap<string, Uint8Array>): Promise<string> {
  for (const path of files.keys()) {
    const normalized = normalize(path);
    const [version] = normalized.split(sep);
    if (isAbsolute(path) || normalized.startsWith('..') || normalized.split(sep).includes('..') || !/^[1-9][0-9]*$/.test(version ?? '') || normalized === version) {
      throw new NereidError(
        'INVALID_ARG',
        `load parameter 'file:${path}' is not a file inside a version folder of the model; expected 'file:<version>/<name>', e.g. 'file:1/model.onnx', with no '..' and no absolute path`,
      );
    }
  }
  const root = await mkdtemp(PRIVATE_PREFIX);
  const modelDir = join(root, modelName);
  for (const [path, bytes] of files) {
    const target = join(modelDir, normalize(path));
    const inside = relative(modelDir, target);
    if (inside.startsWith('..') || isAbsolute(inside)) {
      throw new NereidError('INVALID_ARG', `load parameter 'file:${path}' leaves the model folder`);
    }
    await mkdir(join(target, '..'), { recursive: true });
    await writeFile(target, bytes);
  }
  return modelDir;
}
