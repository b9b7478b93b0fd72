import { NereidError } from '../../kernel/errors.js';
import { readCredentialSection } from './credential-file.js';

/** How one `as://` repository is reached. */
export interface AzureSettings {
  /** `AZURE_STORAGE_CONNECTION_STRING`: when set, it names the endpoint and key (Azurite, sovereign clouds). */
  readonly connectionString?: string;
  /** The shared key of the path's account; none: anonymous access (a public container). */
  readonly accountKey?: string;
  /** Every secret these settings hold, so that no error message or log line repeats one. */
  readonly secrets: readonly string[];
}

interface AzureCredentialEntry {
  readonly account_str?: string;
  readonly account_key?: string;
  readonly auth_type?: string;
}

const nonEmpty = (value: string | undefined): string | undefined => (value === undefined || value === '' ? undefined : value);

/**
 * The settings for the repository at `path`, as Triton chooses them (server
 * `docs/user_guide/model_repository.md`, "Azure Storage"): the `as` entry of the credential file named by
 * `TRITON_CLOUD_CREDENTIAL_PATH` whose name is the longest start of `path`, else `AZURE_STORAGE_KEY`
 * (shared key authentication). Nereid adds `AZURE_STORAGE_CONNECTION_STRING` (the Azure CLI's variable),
 * which also names the endpoint. Managed identity (`AZURE_STORAGE_AUTH_TYPE`) is refused: not built.
 */
export async function resolveAzureSettings(path: string, env: NodeJS.ProcessEnv): Promise<AzureSettings> {
  const file = nonEmpty(env.TRITON_CLOUD_CREDENTIAL_PATH);
  const entry: AzureCredentialEntry =
    file === undefined
      ? { ...(env.AZURE_STORAGE_KEY !== undefined ? { account_key: env.AZURE_STORAGE_KEY } : {}), ...(env.AZURE_STORAGE_AUTH_TYPE !== undefined ? { auth_type: env.AZURE_STORAGE_AUTH_TYPE } : {}) }
      : await readCredentialSection<AzureCredentialEntry>(file, 'as', path);
  const authType = nonEmpty(entry.auth_type);
  if (authType !== undefined && authType !== 'shared_key') {
    throw new NereidError('UNSUPPORTED', `model repository '${path}': Azure authentication '${authType}' is not supported yet; set AZURE_STORAGE_KEY (shared key) or AZURE_STORAGE_CONNECTION_STRING`);
  }
  const connectionString = nonEmpty(env.AZURE_STORAGE_CONNECTION_STRING);
  const accountKey = nonEmpty(entry.account_key);
  const connectionKey = connectionString === undefined ? undefined : /AccountKey=([^;]+)/.exec(connectionString)?.[1];
  return {
    ...(connectionString !== undefined ? { connectionString } : {}),
    ...(accountKey !== undefined ? { accountKey } : {}),
    secrets: [connectionString, connectionKey, accountKey].filter((secret) => secret !== undefined),
  };
}
