import { NereidError } from '../../kernel/errors.js';

/** Where an `s3://` repository lives: the bucket, the key prefix of its models and, for S3-compatible stores, the endpoint. */
export interface S3Location {
  /** `http://host:port` or `https://host:port` for `s3://[https://]host:port/bucket/path`; none for Amazon S3. */
  readonly endpoint?: string;
  readonly bucket: string;
  /** The keys' prefix, ending in `/` unless empty (the repository is the whole bucket). */
  readonly prefix: string;
}

/** Triton's form for an S3-compatible store (core `src/filesystem/implementations/s3.h`): a host with a port before the bucket. */
const HOST_PORT_PATH = /^s3:\/\/(https?:\/\/)?([0-9a-zA-Z.-]+):([0-9]+)\/(.*)$/;

/** Whether a `--model-repository` names object storage rather than a local folder. */
export function isObjectStoragePath(path: string): boolean {
  return /^(s3|gs|as):\/\//.test(path);
}

/**
 * Reads `s3://bucket/path`, `s3://host:port/bucket/path` and `s3://https://host:port/bucket/path`
 * (Triton's forms, server `docs/user_guide/model_repository.md`, "S3"); the endpoint speaks HTTP unless
 * `https://` is given, as in Triton. Refuses `gs://` and `as://`, which Nereid does not read yet.
 */
export function parseObjectStoragePath(path: string): S3Location {
  if (path.startsWith('gs://') || path.startsWith('as://')) {
    throw new NereidError(
      'UNSUPPORTED',
      `model repository '${path}': Google Cloud Storage (gs://) and Azure Storage (as://) repositories are not supported yet; Nereid reads s3:// repositories (Amazon S3 and S3-compatible stores), or a local folder (for example one that gsutil rsync or azcopy sync fills)`,
    );
  }
  const match = HOST_PORT_PATH.exec(path);
  const endpoint = match === null ? undefined : `${match[1] ?? 'http://'}${match[2]}:${match[3]}`;
  const rest = match === null ? path.slice('s3://'.length) : match[4]!;
  const [bucket = '', ...keys] = rest.split('/').filter((part) => part !== '');
  if (bucket === '') throw new NereidError('INVALID_ARG', `No bucket name found in path: ${path}`);
  const prefix = keys.length === 0 ? '' : `${keys.join('/')}/`;
  return { ...(endpoint !== undefined ? { endpoint } : {}), bucket, prefix };
}
