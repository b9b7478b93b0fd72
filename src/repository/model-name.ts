import { NereidError } from '../kernel/errors.js';

/**
 * Triton's answer to a load of a model it cannot find in the repositories; Nereid adds why after it.
 * (Triton's core: `ModelRepositoryManager::LoadUnloadModel`.)
 */
export function modelNotPolledError(name: string, reason: string): NereidError {
  return new NereidError('INVALID_ARG', `failed to load '${name}', failed to poll from model repository; ${reason}`);
}

/** Triton's answer to an unload of a model it does not know; Nereid adds why after it when there is a reason. */
export function unknownModelUnloadError(name: string, reason?: string): NereidError {
  return new NereidError('INVALID_ARG', `failed to unload '${name}': Request for unknown model: '${name}' is not found${reason === undefined ? '' : `; ${reason}`}`);
}

/** The longest file name of Linux's and macOS's file systems (NAME_MAX), in UTF-8 bytes. */
const MAX_NAME_BYTES = 255;

/** Why `name` cannot name a model folder, or undefined when it can. */
function invalidNameReason(name: string): string | undefined {
  if (name === '') return 'a model name cannot be empty';
  if (name.trim() === '') return 'a model name cannot be only whitespace';
  if (name === '.' || name === '..' || name.split(/[/\\]/).includes('..')) return "a model name cannot be '.' or contain '..'";
  if (/[/\\]/.test(name)) return "a model name cannot contain a path separator ('/' or '\\')";
  if (name.includes('\0')) return 'a model name cannot contain a NUL character';
  if (Buffer.byteLength(name, 'utf8') > MAX_NAME_BYTES) return `a model name cannot be longer than ${MAX_NAME_BYTES} bytes, the longest folder name`;
  return undefined;
}

/** True when `name` can name a model folder (see validateModelName). */
export function isModelName(name: string): boolean {
  return invalidNameReason(name) === undefined;
}

/**
 * Checks a model name a client sent to load or unload, before it is used as a folder name: the one
 * place that decides it (both front ends reach it through the repository manager). A model's name
 * is its folder's name in a repository, so a name that is empty, only whitespace, or holds `..` or a
 * path separator names no model folder and could only lead outside the repository.
 */
export function validateModelName(action: 'load' | 'unload', name: string): void {
  if (action === 'load') refuseTritonInvalidName(name);
  const reason = invalidNameReason(name);
  if (reason === undefined) return;
  throw action === 'load' ? modelNotPolledError(name, reason) : unknownModelUnloadError(name, reason);
}

/**
 * The names Triton refuses to load before it looks for them, in its words (core
 * model_repository_manager.cc `ValidateModelName`): empty, only whitespace, or holding '..' or '/'
 * anywhere (so 'x..y' too, though it could name a folder).
 */
function refuseTritonInvalidName(name: string): void {
  if (name === '') throw new NereidError('INVALID_ARG', 'model name must not be empty');
  if (/^[ \t\n\v\f\r]*$/.test(name)) throw new NereidError('INVALID_ARG', 'model name must not contain only whitespace characters');
  if (name.includes('..') || name.includes('/')) {
    throw new NereidError('INVALID_ARG', `invalid model name '${name}', model name must not contain path traversal characters`);
  }
}
