import { readCredentialSection } from './credential-file.js';

/** How one `s3://` repository is reached: its region and, when given, its credentials and profile. */
export interface S3Settings {
  readonly region: string;
  readonly credentials?: { readonly accessKeyId: string; readonly secretAccessKey: string; readonly sessionToken?: string };
  readonly profile?: string;
  /** Every secret these settings hold, so that no error message or log line repeats one. */
  readonly secrets: readonly string[];
}

/** One `s3` entry of Triton's credential file (`TRITON_CLOUD_CREDENTIAL_PATH`); an empty string means unset. */
interface CredentialEntry {
  readonly secret_key?: string;
  readonly key_id?: string;
  readonly region?: string;
  readonly session_token?: string;
  readonly profile?: string;
}

const nonEmpty = (value: string | undefined): string | undefined => (value === undefined || value === '' ? undefined : value);

/**
 * The settings for the repository at `path`, as Triton chooses them (server
 * `docs/user_guide/model_repository.md`): with `TRITON_CLOUD_CREDENTIAL_PATH` set, the `s3` entry of that
 * JSON file whose name is the longest start of `path` (`""` matches every path); otherwise the
 * environment, `AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`, `AWS_SESSION_TOKEN` and `AWS_DEFAULT_REGION`
 * (or `AWS_REGION`), and, without keys there, the AWS SDK's own chain (`AWS_PROFILE`, `~/.aws`, a pod's
 * web identity or the instance role). The region defaults to us-east-1.
 */
export async function resolveS3Settings(path: string, env: NodeJS.ProcessEnv): Promise<S3Settings> {
  const file = nonEmpty(env.TRITON_CLOUD_CREDENTIAL_PATH);
  const entry = file === undefined ? fromEnvironment(env) : await readCredentialSection<CredentialEntry>(file, 's3', path);
  const accessKeyId = nonEmpty(entry.key_id);
  const secretAccessKey = nonEmpty(entry.secret_key);
  const sessionToken = nonEmpty(entry.session_token);
  const profile = nonEmpty(entry.profile);
  return {
    region: nonEmpty(entry.region) ?? 'us-east-1',
    ...(accessKeyId !== undefined && secretAccessKey !== undefined
      ? { credentials: { accessKeyId, secretAccessKey, ...(sessionToken !== undefined ? { sessionToken } : {}) } }
      : {}),
    ...(profile !== undefined ? { profile } : {}),
    secrets: [accessKeyId, secretAccessKey, sessionToken].filter((secret) => secret !== undefined),
  };
}

function fromEnvironment(env: NodeJS.ProcessEnv): CredentialEntry {
  return {
    ...(env.AWS_ACCESS_KEY_ID !== undefined ? { key_id: env.AWS_ACCESS_KEY_ID } : {}),
    ...(env.AWS_SECRET_ACCESS_KEY !== undefined ? { secret_key: env.AWS_SECRET_ACCESS_KEY } : {}),
    ...(env.AWS_SESSION_TOKEN !== undefined ? { session_token: env.AWS_SESSION_TOKEN } : {}),
    ...((env.AWS_DEFAULT_REGION ?? env.AWS_REGION) !== undefined ? { region: (env.AWS_DEFAULT_REGION ?? env.AWS_REGION)! } : {}),
  };
}
