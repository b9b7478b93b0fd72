import { realpath } from 'node:fs/promises';
import { isAbsolute, relative, resolve, sep } from 'node:path';
import { NereidError } from './errors.js';

/** A path a config, a load override or a request names, and the folder it must stay inside. */
export interface ConfinedPathRequest {
  /** The folder the path belongs to (a repository, a model folder, a version folder). */
  readonly folder: string;
  /** The path as named, relative to `folder`. */
  readonly path: string;
  /** What named it, for the reason: `label_filename`, `default_model_filename`, `model folder`... */
  readonly field: string;
}

/**
 * Resolves `path` inside `folder` after resolving symbolic links on both, or throws INVALID_ARG
 * naming the field and the path. The one place Nereid decides whether a named file may be read:
 * `..` segments, absolute paths and symbolic links that lead out of the folder are all refused, so
 * neither a config nor a load request can make the server read or run a file elsewhere. A path
 * that does not exist is refused too (with the system's reason), as the file it names is needed.
 */
export async function resolveConfinedPath(request: ConfinedPathRequest): Promise<string> {
  const { folder, path, field } = request;
  const realFolder = await realpath(folder).catch((error: Error) => {
    throw new NereidError('INVALID_ARG', `${field} '${path}': cannot resolve the folder '${folder}': ${error.message}`);
  });
  const target = await realpath(resolve(realFolder, path)).catch((error: Error) => {
    throw new NereidError('INVALID_ARG', `${field} '${path}': cannot resolve it inside '${folder}': ${error.message}`);
  });
  if (!isInside(realFolder, target)) {
    throw new NereidError(
      'INVALID_ARG',
      `${field} '${path}' resolves to '${target}', outside '${folder}'; expected a path inside that folder (no '..', no absolute path, no symbolic link that leads out)`,
    );
  }
  return target;
}

/** Whether `target` is `folder` itself or lies below it (both already resolved). */
export function isInside(folder: string, target: string): boolean {
  const inside = relative(folder, target);
  return inside === '' || (inside !== '..' && !inside.startsWith(`..${sep}`) && !isAbsolute(inside));
}
