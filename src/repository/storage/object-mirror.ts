import { createWriteStream } from 'node:fs';
import { mkdir, rename, rm, rmdir } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { NereidError } from '../../kernel/errors.js';
import type { ObjectStore } from './object-store.js';
import { redactSecrets } from './redact-secrets.js';

export interface ObjectMirrorOptions {
  /** The repository as named on the command line, for messages (it holds no secret). */
  readonly path: string;
  readonly store: ObjectStore;
  /** The credentials' secrets, kept out of every message. */
  readonly secrets: readonly string[];
  /** The local folder that holds the copy; the repository manager reads its models there. */
  readonly localDir: string;
}

/** What one sync changed in the local copy. */
export interface SyncResult {
  readonly fetchedCount: number;
  readonly removedCount: number;
}

/** How many objects download at once. */
const DOWNLOAD_CONCURRENCY = 8;
/** A name segment the copy may hold: never `.`, `..`, empty, or with a separator. */
const SAFE_SEGMENT = /^(?!\.{1,2}$)[^/\\\0]+$/;

/**
 * A local copy of the models of a repository in object storage. Each sync lists the objects, downloads
 * those whose version (ETag) changed since the last sync or that are new, and deletes the files whose
 * objects are gone, so the repository's poller sees a changed, new or removed model as in a local
 * folder. A file is written beside its place and renamed there, so a load never reads half an object.
 * A name with a `.` or `..` segment is skipped: no object can lead the copy out of its folder.
 */
export class ObjectMirror {
  readonly #options: ObjectMirrorOptions;
  /** The version of each object in the copy, by its name below the prefix. */
  readonly #versions = new Map<string, string>();

  constructor(options: ObjectMirrorOptions) {
    this.#options = options;
  }

  /** Brings the copy up to date; throws UNAVAILABLE, naming the repository and the store's reason, when the store cannot be read. */
  async sync(): Promise<SyncResult> {
    try {
      return await this.#sync();
    } catch (error) {
      throw this.#describe(error);
    }
  }

  close(): void {
    this.#options.store.close();
  }

  async #sync(): Promise<SyncResult> {
    const { store, localDir } = this.#options;
    const listed = new Map<string, string>();
    for await (const { key, version } of store.list()) {
      // A name ending in `/` is a folder marker.
      if (key === '' || key.endsWith('/') || !key.split('/').every((segment) => SAFE_SEGMENT.test(segment))) continue;
      listed.set(key, version);
    }
    const toFetch = [...listed].filter(([key, version]) => this.#versions.get(key) !== version);
    for (let start = 0; start < toFetch.length; start += DOWNLOAD_CONCURRENCY) {
      await Promise.all(toFetch.slice(start, start + DOWNLOAD_CONCURRENCY).map(([key, version]) => this.#fetch(key, version)));
    }
    const toRemove = [...this.#versions.keys()].filter((key) => !listed.has(key));
    for (const key of toRemove) {
      await rm(join(localDir, key), { force: true });
      this.#versions.delete(key);
      await this.#removeEmptyFolders(dirname(join(localDir, key)));
    }
    return { fetchedCount: toFetch.length, removedCount: toRemove.length };
  }

  async #fetch(key: string, version: string): Promise<void> {
    const target = join(this.#options.localDir, key);
    const partial = `${target}.nereid-partial`;
    await mkdir(dirname(target), { recursive: true });
    await pipeline(await this.#options.store.read(key), createWriteStream(partial));
    await rename(partial, target);
    this.#versions.set(key, version);
  }

  /** Removes `dir` and its parents while they are empty, up to the copy's own folder. */
  async #removeEmptyFolders(dir: string): Promise<void> {
    const { localDir } = this.#options;
    for (let current = dir; current.startsWith(localDir) && current !== localDir; current = dirname(current)) {
      const isRemoved = await rmdir(current).then(
        () => true,
        () => false,
      );
      if (!isRemoved) return;
    }
  }

  #describe(error: unknown): NereidError {
    const { path, secrets } = this.#options;
    const cause = error as { name?: string; message?: string; code?: unknown };
    // The AWS SDK names its errors (NoSuchBucket); Azure's RestError and Node's socket errors carry a code.
    const label = cause.name !== undefined && cause.name !== 'Error' && cause.name !== 'RestError' ? cause.name : typeof cause.code === 'string' ? cause.code : undefined;
    const firstLine = (cause.message ?? String(error)).split('\n')[0]!;
    // Only the store's words are redacted: a short secret must not blank letters of Nereid's own sentence.
    return new NereidError('UNAVAILABLE', `cannot read model repository '${path}': ${redactSecrets(`${label !== undefined ? `${label}: ` : ''}${firstLine}`, secrets)}`);
  }
}
