import { readFile } from 'node:fs/promises';
import { NereidError } from '../../kernel/errors.js';

/**
 * The entry of one section (`s3`, `as`) of Triton's credential file (`TRITON_CLOUD_CREDENTIAL_PATH`)
 * whose name is the longest start of `path` (`""` matches every path); `{}` when none matches.
 */
export async function readCredentialSection<Entry extends object>(file: string, section: 's3' | 'as', path: string): Promise<Partial<Entry>> {
  const text = await readFile(file, 'utf8').catch((error: Error) => {
    throw new NereidError('INVALID_ARG', `cannot read the credential file named by TRITON_CLOUD_CREDENTIAL_PATH ('${file}'): ${error.message}`);
  });
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    // The parser's message may quote the file, and so a key: say only where.
    throw new NereidError('INVALID_ARG', `the credential file named by TRITON_CLOUD_CREDENTIAL_PATH ('${file}') is not valid JSON`);
  }
  const entries = (parsed as Record<string, unknown> | null)?.[section];
  if (typeof entries !== 'object' || entries === null) return {};
  const longest = Object.keys(entries)
    .filter((name) => path.startsWith(name))
    .sort((a, b) => b.length - a.length)[0];
  return longest === undefined ? {} : ((entries as Record<string, Partial<Entry>>)[longest] ?? {});
}
