import { createWriteStream } from 'node:fs';
import { mkdir, rename, rm, rmdir } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { S3Client } from '@aws-sdk/client-s3';
import { NereidError } from '../../kernel/errors.js';
import type { S3Location } from './object-storage-path.js';
import { type S3Settings, redactSecrets } from './s3-settings.js';

export interface S3MirrorOptions {
  /** The repository as named on the command line, for messages (it holds no secret). */
  readonly path: string;
  readonly location: S3Location;
  readonly settings: S3Settings;
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
/** A key the copy may hold: relative segments of Triton's names, never `.`, `..` or an empty one. */
const SAFE_SEGMENT = /^(?!\.{1,2}$)[^/\\\0]+$/;

/**
 * A local copy of the models under an S3 prefix. Each sync lists the prefix, downloads the objects
 * whose ETag changed since the last sync (or that are new), and deletes the files whose objects are
 * gone, so the repository's poller sees a changed, new or removed model as in a local folder. A file
 * is written beside its place and renamed there, so a load never reads half an object.
 * The AWS SDK is imported on the first sync only: a server without s3:// repositories never loads it.
 */
export class S3Mirror {
  readonly #options: S3MirrorOptions;
  #client: S3Client | undefined;
  /** The ETag of each object in the copy, by its key below the prefix. */
  readonly #etags = new Map<string, string>();

  constructor(options: S3MirrorOptions) {
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
    this.#client?.destroy();
  }

  async #sync(): Promise<SyncResult> {
    const sdk = await import('@aws-sdk/client-s3');
    const client = (this.#client ??= this.#createClient(sdk));
    const { bucket, prefix } = this.#options.location;
    const listed = new Map<string, string>();
    for await (const page of sdk.paginateListObjectsV2({ client }, { Bucket: bucket, Prefix: prefix })) {
      for (const object of page.Contents ?? []) {
        const key = object.Key?.slice(prefix.length) ?? '';
        // A key ending in `/` is a folder marker; others with odd segments could lead out of the copy.
        if (key === '' || key.endsWith('/') || !key.split('/').every((segment) => SAFE_SEGMENT.test(segment))) continue;
        listed.set(key, object.ETag ?? `${object.Size}:${object.LastModified?.toISOString()}`);
      }
    }
    const toFetch = [...listed].filter(([key, etag]) => this.#etags.get(key) !== etag);
    for (let start = 0; start < toFetch.length; start += DOWNLOAD_CONCURRENCY) {
      await Promise.all(toFetch.slice(start, start + DOWNLOAD_CONCURRENCY).map(([key, etag]) => this.#fetch(sdk, key, etag)));
    }
    const toRemove = [...this.#etags.keys()].filter((key) => !listed.has(key));
    for (const key of toRemove) {
      await rm(join(this.#options.localDir, key), { force: true });
      this.#etags.delete(key);
      await this.#removeEmptyFolders(dirname(join(this.#options.localDir, key)));
    }
    return { fetchedCount: toFetch.length, removedCount: toRemove.length };
  }

  #createClient(sdk: typeof import('@aws-sdk/client-s3')): S3Client {
    const { location, settings } = this.#options;
    return new sdk.S3Client({
      region: settings.region,
      ...(location.endpoint !== undefined ? { endpoint: location.endpoint, forcePathStyle: true } : {}),
      ...(settings.credentials !== undefined ? { credentials: settings.credentials } : {}),
      ...(settings.profile !== undefined ? { profile: settings.profile } : {}),
      requestHandler: { connectionTimeout: 5_000, requestTimeout: 60_000 },
    });
  }

  async #fetch(sdk: typeof import('@aws-sdk/client-s3'), key: string, etag: string): Promise<void> {
    const { bucket, prefix } = this.#options.location;
    const response = await this.#client!.send(new sdk.GetObjectCommand({ Bucket: bucket, Key: prefix + key }));
    const target = join(this.#options.localDir, key);
    const partial = `${target}.nereid-partial`;
    await mkdir(dirname(target), { recursive: true });
    await pipeline(response.Body as Readable, createWriteStream(partial));
    await rename(partial, target);
    this.#etags.set(key, etag);
  }

  /** Removes `dir` and its parents while they are empty, up to the copy's own folder. */
  async #removeEmptyFolders(dir: string): Promise<void> {
    for (let current = dir; current.startsWith(this.#options.localDir) && current !== this.#options.localDir; current = dirname(current)) {
      const isRemoved = await rmdir(current).then(
        () => true,
        () => false,
      );
      if (!isRemoved) return;
    }
  }

  #describe(error: unknown): NereidError {
    const { path, settings } = this.#options;
    const cause = error as { name?: string; message?: string; code?: string };
    const reason = cause.name !== undefined && cause.name !== 'Error' ? `${cause.name}: ${cause.message}` : (cause.message ?? String(error));
    return new NereidError('UNAVAILABLE', redactSecrets(`cannot read model repository '${path}': ${reason}`, settings.secrets));
  }
}
