import { lstat, readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { NereidError } from '../kernel/errors.js';
import { isModelName } from './model-name.js';

/** Folders Triton keeps inside a model folder that are not versions: no warning for these. */
const KNOWN_SUBFOLDERS = new Set(['configs', 'warmup', 'initial_state']);
const VERSION_FOLDER = /^[1-9][0-9]*$/;

/**
 * Every model folder in the repositories, by model name (a name in two repositories has two folders).
 * Hidden folders and plain files are skipped; an unreadable repository throws INVALID_ARG.
 * Symbolic links are skipped too (a Dirent of a link is no directory): a model folder is always a real
 * folder inside its repository, so no link can lead a model out of it (issue 24's confinement).
 */
export async function scanRepositories(repositoryPaths: readonly string[]): Promise<Map<string, string[]>> {
  const found = new Map<string, string[]>();
  for (const repository of repositoryPaths) {
    const entries = await readdir(repository, { withFileTypes: true }).catch((error: Error) => {
      throw new NereidError('INVALID_ARG', `cannot read model repository '${repository}': ${error.message}`);
    });
    for (const entry of entries) {
      if (!entry.isDirectory() || entry.name.startsWith('.')) continue;
      found.set(entry.name, [...(found.get(entry.name) ?? []), join(repository, entry.name)]);
    }
  }
  return found;
}

/**
 * The folders named `name` in the repositories, as scanRepositories would find them, without reading
 * every repository: a request may name any model. A name that cannot name a model folder (a path,
 * `..`, a hidden name) finds none.
 */
export async function findModelFolders(repositoryPaths: readonly string[], name: string): Promise<string[]> {
  if (!isModelName(name) || name.startsWith('.')) return [];
  const candidates = repositoryPaths.map((repository) => join(repository, name));
  const infos = await Promise.all(candidates.map((dir) => lstat(dir).catch(() => undefined)));
  return candidates.filter((_, index) => infos[index]?.isDirectory() === true);
}

/**
 * The version folders of a model folder (1, 2, ... without leading zeros), unsorted; `onIgnored` hears
 * of each other folder, except those Triton keeps there (configs, warmup, initial_state). Links are
 * skipped, as in scanRepositories, so a version folder is always inside its model folder.
 */
export async function findVersions(modelDir: string, onIgnored: (folder: string) => void): Promise<number[]> {
  const entries = await readdir(modelDir, { withFileTypes: true });
  const versions: number[] = [];
  for (const entry of entries) {
    if (!entry.isDirectory()) continue;
    if (VERSION_FOLDER.test(entry.name)) versions.push(Number(entry.name));
    else if (!KNOWN_SUBFOLDERS.has(entry.name)) onIgnored(entry.name);
  }
  return versions;
}

/**
 * What a model's folders look like: every file and folder below them (three levels: config, labels,
 * version folders and their files) with its size and modification time. A change anywhere changes it.
 */
export async function fingerprintFolders(dirs: readonly string[]): Promise<string> {
  const parts: string[] = [];
  const walk = async (dir: string, depth: number): Promise<void> => {
    const entries = await readdir(dir, { withFileTypes: true }).catch(() => []);
    for (const entry of entries.sort((a, b) => a.name.localeCompare(b.name))) {
      const path = join(dir, entry.name);
      const info = await stat(path).catch(() => undefined);
      parts.push(`${path}:${info?.size ?? '?'}:${info?.mtimeMs ?? '?'}`);
      if (entry.isDirectory() && depth < 3) await walk(path, depth + 1);
    }
  };
  for (const dir of dirs) await walk(dir, 1);
  return parts.join('\n');
}
