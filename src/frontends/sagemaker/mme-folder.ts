import { readFile, readdir, realpath, stat } from 'node:fs/promises';
import { basename, dirname, join, relative, resolve, sep } from 'node:path';
import { NereidError } from '../../core/index.js';

/** Where a multi-model endpoint's load finds its model: the repository to register and the model's folder in it. */
export interface MmeFolder {
  readonly repository: string;
  readonly subfolder: string;
}

/** System folders a load may not name (Triton's SageMakerMMELoadModel check). */
const SYSTEM_FOLDERS = ['/dev/', '/proc/', '/sys/'];

/** An ensemble's config, as Triton's multi-model endpoint spots one (RE2::PartialMatch). */
const ENSEMBLE_PLATFORM = /platform:(\s)*"ensemble"/;

/** The load `url` made absolute and normal (no symbolic link followed); undefined for one in /dev, /proc or /sys, which Triton answers 400 with an empty body. */
export function normalizeLoadUrl(url: string): string | undefined {
  const absolute = resolve(url);
  return SYSTEM_FOLDERS.some((folder) => `${absolute}/`.startsWith(folder)) ? undefined : absolute;
}

/**
 * Throws INVALID_ARG unless `folder`, links followed, is `root` (`--sagemaker-mme-root`) or inside it:
 * the load route registers a repository and runs whatever model it holds, Python code included, so it
 * registers only where SageMaker puts models.
 */
export async function checkInsideRoot(folder: string, root: string): Promise<void> {
  const [real, realRoot] = await Promise.all([realpath(folder).catch(() => folder), realpath(root).catch(() => resolve(root))]);
  const path = relative(realRoot, real);
  if (path === '..' || path.startsWith(`..${sep}`) || resolve(realRoot, path) !== real) {
    throw new NereidError(
      'INVALID_ARG',
      `'${folder}' is outside ${root}, the folder the multi-model endpoint loads models from; start the server with --sagemaker-mme-root=DIR to load from elsewhere`,
    );
  }
}

const isFile = (path: string): Promise<boolean> =>
  stat(path).then(
    (info) => info.isFile(),
    () => false,
  );

/**
 * The model a multi-model endpoint's load names, as Triton's SageMakerMMELoadModel finds it: a `url`
 * holding config.pbtxt is the model's folder, registered through its parent (SageMaker's layout,
 * /opt/ml/models/<hash>/model); otherwise `url` is the repository and the model is its ensemble's folder
 * when one holds an ensemble config, else its last folder (by name: Triton takes readdir's order).
 */
export async function findMmeFolder(url: string): Promise<MmeFolder> {
  if (await isFile(join(url, 'config.pbtxt'))) return { repository: dirname(url), subfolder: basename(url) };
  const entries = await readdir(url, { withFileTypes: true }).catch((error: Error) => {
    throw new NereidError('INVALID_ARG', `failed to register '${url}', repository not found (${error.message})`);
  });
  const folders = entries.filter((entry) => entry.isDirectory() && !entry.name.startsWith('.')).map((entry) => entry.name).sort();
  if (folders.length === 0) throw new NereidError('INVALID_ARG', `no model folder in '${url}': expected a model's folder (holding config.pbtxt) or a folder of them`);
  const configs = await Promise.all(folders.map((folder) => readFile(join(url, folder, 'config.pbtxt'), 'utf8').catch(() => '')));
  const ensemble = folders.filter((_, index) => ENSEMBLE_PLATFORM.test(configs[index]!)).pop();
  return { repository: url, subfolder: ensemble ?? folders[folders.length - 1]! };
}
