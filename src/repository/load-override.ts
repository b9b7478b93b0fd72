import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { isAbsolute, join, normalize, sep } from 'node:path';
import { isInside } from '../kernel/confined-path.js';
import { NereidError } from '../kernel/errors.js';

/** What a load request may replace (Triton's load parameters `config` and `file:<version>/<name>`). */
export interface LoadOverride {
  /** A model configuration as JSON, used instead of config.pbtxt. */
  readonly configJson?: string;
  /** Model files by their path inside the model folder, e.g. `1/model.onnx`. */
  readonly files: ReadonlyMap<string, Uint8Array>;
}

const PRIVATE_PREFIX = join(tmpdir(), 'nereid-model-');

/**
 * File endings a backend would run as code: Python and JavaScript/TypeScript modules, native
 * libraries, and pickles. TorchScript and PyTorch files (`.pt`, `.pt2`, `.pth`) count: they are zip
 * archives of pickled data, and unpickling can call any Python function (torch's own `weights_only`
 * guard has been bypassed), so they are code to the server. ONNX files are data: ONNX Runtime reads
 * the graph and runs only its built-in operators.
 */
const CODE_FILE = /\.(py|pyc|js|mjs|cjs|ts|mts|cts|so|node|dylib|dll|pt|pt2|pth|pkl|pickle)$/i;

/** What the operator's opt-in flag says, for every refusal of code. */
export const CODE_UPLOAD_HINT = 'code uploads are off: start the server with --allow-model-code-upload=true to allow them';

/** Refuses load files that a backend would run as code (the server's user would run what a client sent). */
export function refuseCodeFiles(files: ReadonlyMap<string, Uint8Array>): void {
  for (const path of files.keys()) {
    const ending = CODE_FILE.exec(path);
    if (ending !== null) {
      throw new NereidError('INVALID_ARG', `load parameter 'file:${path}' is code (${ending[0]}), which a backend would run as the server's user; ${CODE_UPLOAD_HINT}`);
    }
  }
}

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
    if (isAbsolute(path) || normalized.startsWith('..') || normalized.split(sep).includes('..') || !/^[1-9][0-9]*$/.test(version ?? '') || normalized === version || normalized.endsWith(sep)) {
      throw new NereidError(
        'INVALID_ARG',
        `load parameter 'file:${path}' is not a file inside a version folder of the model; expected 'file:<version>/<name>', e.g. 'file:1/model.onnx', with no '..' and no absolute path`,
      );
    }
  }
  const root = await mkdtemp(PRIVATE_PREFIX);
  // The name was validated (model-name.ts), so the model folder is a child of the private folder.
  const modelDir = join(root, modelName);
  let current = '';
  try {
    for (const [path, bytes] of files) {
      current = path;
      const target = join(modelDir, normalize(path));
      if (!isInside(modelDir, target) || !isInside(root, modelDir)) {
        throw new NereidError('INVALID_ARG', `load parameter 'file:${path}' leaves the model folder`);
      }
      await mkdir(join(target, '..'), { recursive: true });
      await writeFile(target, bytes);
    }
  } catch (error) {
    // A refused or failed write leaves nothing behind in the temporary directory.
    await rm(root, { recursive: true, force: true });
    const why = CLIENT_WRITE_ERRORS[(error as NodeJS.ErrnoException).code ?? ''];
    if (why !== undefined) throw new NereidError('INVALID_ARG', `load parameter 'file:${current}' cannot be written: ${why}`, { cause: error });
    throw error;
  }
  return modelDir;
}

/** Write failures that the load request's own paths cause (found by test/fuzz: they were answered 500). */
const CLIENT_WRITE_ERRORS: Readonly<Record<string, string>> = {
  ENAMETOOLONG: 'a name in its path is longer than the file system allows (255 bytes)',
  EEXIST: 'another load parameter is a file where this path needs a folder',
  ENOTDIR: 'another load parameter is a file where this path needs a folder',
  EISDIR: 'other load parameters make a folder of this path',
};
