import { stat } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { NereidError } from '../kernel/errors.js';

/**
 * The model repositories registered while the server runs, each with its model mapping (model name →
 * subfolder), as Triton's TRITONSERVER_ServerRegisterModelRepository keeps them (core
 * ModelRepositoryManager::RegisterModelRepository): the SageMaker front end's multi-model endpoint
 * registers the folder of each model it loads. A mapped subfolder is known by its mapped name only; the
 * repository's other folders by their own names, as in any repository.
 */
export class RegisteredRepositories {
  /** Repository path → (model name → the model's folder). */
  readonly #repositories = new Map<string, ReadonlyMap<string, string>>();

  /** The registered repositories' paths. */
  get paths(): string[] {
    return [...this.#repositories.keys()];
  }

  /**
   * Registers a repository, in Triton's words when it cannot: INVALID_ARG for a path that is no folder,
   * ALREADY_EXISTS for a repository already known (`startupPaths` are the ones the server started with)
   * or a model name another registration maps.
   */
  async register(repository: string, mapping: ReadonlyMap<string, string>, startupPaths: readonly string[]): Promise<void> {
    const isFolder = await stat(repository).then(
      (info) => info.isDirectory(),
      () => false,
    );
    if (!isFolder) throw new NereidError('INVALID_ARG', `failed to register '${repository}', repository not found`);
    if (this.#repositories.has(repository) || startupPaths.some((path) => resolve(path) === resolve(repository))) {
      throw new NereidError('ALREADY_EXISTS', `model repository '${repository}' has already been registered`);
    }
    for (const name of mapping.keys()) {
      if (this.folderOf(name) !== undefined) {
        throw new NereidError('ALREADY_EXISTS', `failed to register '${name}', there is a conflicting mapping for '${name}'`);
      }
    }
    this.#repositories.set(repository, new Map([...mapping].map(([name, subfolder]) => [name, join(repository, subfolder)])));
  }

  /** Forgets a repository and its mapping; INVALID_ARG, in Triton's words, for one not registered. */
  unregister(repository: string): void {
    if (!this.#repositories.delete(repository)) throw new NereidError('INVALID_ARG', `failed to unregister '${repository}', repository not found`);
  }

  /** The folder a registration maps `name` to, or undefined. */
  folderOf(name: string): string | undefined {
    for (const mapping of this.#repositories.values()) {
      const folder = mapping.get(name);
      if (folder !== undefined) return folder;
    }
    return undefined;
  }

  /** Whether `folder` is a mapped model's folder (which no scan lists under its own name). */
  isMapped(folder: string): boolean {
    for (const mapping of this.#repositories.values()) {
      for (const mapped of mapping.values()) if (mapped === folder) return true;
    }
    return false;
  }

  /** A repository's scan (model name → folders) without the mapped folders, which no scan lists under their own names. */
  withoutMapped(found: Map<string, string[]>): Map<string, string[]> {
    for (const [name, folders] of found) {
      const unmapped = folders.filter((folder) => !this.isMapped(folder));
      if (unmapped.length === 0) found.delete(name);
      else found.set(name, unmapped);
    }
    return found;
  }

  /** The models a registration maps, by repository: model name → its folder. */
  mappings(): Array<[repository: string, models: ReadonlyMap<string, string>]> {
    return [...this.#repositories];
  }
}
