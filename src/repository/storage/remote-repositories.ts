import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { Logger } from '../../logging/logger.js';
import { resolveAzureSettings } from './azure-settings.js';
import { AzureStore } from './azure-store.js';
import { ObjectMirror } from './object-mirror.js';
import { type ObjectStorageLocation, isObjectStoragePath, parseObjectStoragePath } from './object-storage-path.js';
import { resolveS3Settings } from './s3-settings.js';
import { S3Store } from './s3-store.js';

/** The repositories as local folders, with what keeps the copies of object-storage ones up to date. */
export interface LocalRepositories {
  /** One local folder per `--model-repository`, in order: the folder itself, or the copy of a bucket's models. */
  readonly paths: readonly string[];
  /** Brings every copy up to date (one sync at a time); throws when a store cannot be read. None without object storage. */
  readonly sync?: () => Promise<void>;
  /** Closes the clients and deletes the copies Nereid made in a temporary folder. */
  close(): Promise<void>;
}

export interface LocalRepositoriesOptions {
  readonly logger: Logger;
  /** Where credentials, the region and `TRITON_AWS_MOUNT_DIRECTORY` are read (process.env). */
  readonly env: NodeJS.ProcessEnv;
}

/**
 * Turns `--model-repository` values into local folders. An `s3://` or `as://` repository is copied,
 * before any model loads, into `TRITON_AWS_MOUNT_DIRECTORY` or `TRITON_AZURE_MOUNT_DIRECTORY` (kept at
 * exit) or a temporary folder (deleted at exit), as Triton does (server
 * `docs/user_guide/model_repository.md`). A store that cannot be read at start-up
 * fails the start with its reason, as Triton's start-up does; later, `sync` throws and the poller logs
 * the reason while the models already loaded keep serving from their copy.
 */
export async function openRepositories(paths: readonly string[], options: LocalRepositoriesOptions): Promise<LocalRepositories> {
  if (!paths.some(isObjectStoragePath)) return { paths, close: async () => {} };
  const locations = paths.map((path) => (isObjectStoragePath(path) ? parseObjectStoragePath(path) : undefined));
  const mountDir = options.env.TRITON_AWS_MOUNT_DIRECTORY ?? options.env.TRITON_AZURE_MOUNT_DIRECTORY;
  const isTemporary = mountDir === undefined || mountDir === '';
  const root = isTemporary ? await mkdtemp(join(tmpdir(), 'nereid-objects-')) : resolve(mountDir);
  const mirrors: Array<{ readonly path: string; readonly mirror: ObjectMirror }> = [];
  const localPaths: string[] = [];
  for (const [index, path] of paths.entries()) {
    const location = locations[index];
    if (location === undefined) {
      localPaths.push(path);
      continue;
    }
    const localDir = join(root, String(index));
    await mkdir(localDir, { recursive: true });
    mirrors.push({ path, mirror: new ObjectMirror({ path, localDir, ...(await openStore(path, location, options)) }) });
    localPaths.push(localDir);
  }
  const close = async (): Promise<void> => {
    for (const { mirror } of mirrors) mirror.close();
    if (isTemporary) await rm(root, { recursive: true, force: true });
  };
  let syncing: Promise<void> = Promise.resolve();
  const syncAll = async (): Promise<void> => {
    for (const { path, mirror } of mirrors) {
      const { fetchedCount, removedCount } = await mirror.sync();
      if (fetchedCount + removedCount > 0) {
        options.logger.info('repository', `model repository '${path}': fetched ${fetchedCount} and removed ${removedCount} file(s) of its local copy`);
      }
    }
  };
  // One sync at a time: a poll and a load request may both ask, and two syncs would write the same files.
  const sync = (): Promise<void> => (syncing = syncing.then(syncAll, syncAll));
  try {
    await sync();
  } catch (error) {
    await close();
    throw error;
  }
  return { paths: localPaths, sync, close };
}

/** The store behind a location, with the secrets of its credentials. */
async function openStore(path: string, location: ObjectStorageLocation, { env, logger }: LocalRepositoriesOptions): Promise<{ store: S3Store | AzureStore; secrets: readonly string[] }> {
  if (location.kind === 'as') {
    const settings = await resolveAzureSettings(path, env);
    return { store: new AzureStore(location, settings), secrets: settings.secrets };
  }
  const settings = await resolveS3Settings(path, env);
  return { store: new S3Store(location, settings, logger), secrets: settings.secrets };
}
