import { NereidError } from '../../kernel/errors.js';

/** Where an `s3://` repository lives: the bucket, the key prefix of its models and, for S3-compatible stores, the endpoint. */
export interface S3Location {
  readonly kind: 's3';
  /** `http://host:port` or `https://host:port` for `s3://[https://]host:port/bucket/path`; none for Amazon S3. */
  readonly endpoint?: string;
  readonly bucket: string;
  /** The keys' prefix, ending in `/` unless empty (the repository is the whole bucket). */
  readonly prefix: string;
}

/** Where an `as://account/container/path` repository lives in Azure Blob Storage. */
export interface AzureLocation {
  readonly kind: 'as';
  readonly account: string;
  readonly container: string;
  /** The blob names' prefix, ending in `/` unless empty. */
  readonly prefix: string;
}

export type ObjectStorageLocation = S3Location | AzureLocation;

/** Triton's form for an S3-compatible store (core `src/filesystem/implementations/s3.h`): a host with a port before the bucket. */
const HOST_PORT_PATH = /^s3:\/\/(https?:\/\/)?([0-9a-zA-Z.-]+):([0-9]+)\/(.*)$/;

/** Whether a `--model-repository` names object storage rather than a local folder. */
export function isObjectStoragePath(path: string): boolean {
  return /^(s3|gs|as):\/\//.test(path);
}

const segmentsOf = (rest: string): string[] => rest.split('/').filter((part) => part !== '');
const prefixOf = (segments: readonly string[]): string => (segments.length === 0 ? '' : `${segments.join('/')}/`);

/**
 * Reads Triton's forms (server `docs/user_guide/model_repository.md`, "Cloud Storage"): `s3://bucket/path`,
 * `s3://host:port/bucket/path` and `s3://https://host:port/bucket/path` (the endpoint speaks HTTP unless
 * `https://` is given, as in Triton), and `as://account/container/path`. Refuses `gs://`, which Nereid
 * does not read yet.
 */
export function parseObjectStoragePath(path: string): ObjectStorageLocation {
  if (path.startsWith('gs://')) {
    throw new NereidError(
      'UNSUPPORTED',
      `model repository '${path}': Google Cloud Storage (gs://) repositories are not supported yet; Nereid reads s3:// (Amazon S3 and S3-compatible stores) and as:// (Azure Blob Storage) repositories, or a local folder (for example one that gsutil rsync fills)`,
    );
  }
  if (path.startsWith('as://')) {
    const [account = '', container = '', ...names] = segmentsOf(path.slice('as://'.length));
    if (account === '' || container === '') throw new NereidError('INVALID_ARG', `No account name or container name found in path: ${path}; expected as://account/container/path`);
    return { kind: 'as', account, container, prefix: prefixOf(names) };
  }
  const match = HOST_PORT_PATH.exec(path);
  const endpoint = match === null ? undefined : `${match[1] ?? 'http://'}${match[2]}:${match[3]}`;
  const [bucket = '', ...keys] = segmentsOf(match === null ? path.slice('s3://'.length) : match[4]!);
  if (bucket === '') throw new NereidError('INVALID_ARG', `No bucket name found in path: ${path}`);
  return { kind: 's3', ...(endpoint !== undefined ? { endpoint } : {}), bucket, prefix: prefixOf(keys) };
}
