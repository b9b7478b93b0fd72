import { NereidError } from '../core/index.js';

/**
 * A model version as the gRPC protocol carries it (`version`, `model_version`): digits, or empty for
 * the server's choice (undefined). The errors are Triton's, word for word (server `src/common.cc`
 * `GetModelVersionFromString`; "stol" is what its std::stol failure reports); Triton's std::stol also
 * takes leading spaces, a sign and trailing characters ("3a" is 3), which Nereid refuses.
 * NOTE: over HTTP the version is a path segment, which Triton's route only matches as digits; routes.ts
 * answers a segment that is not a number with its own message.
 */
export function parseModelVersion(text: string): number | undefined {
  if (text === '') return undefined;
  if (/^-[0-9]+$/.test(text)) {
    throw new NereidError('INVALID_ARG', `invalid model version specified '${text}' , version should be an integral value > 0`);
  }
  const version = Number(text);
  if (!/^[0-9]+$/.test(text) || !Number.isSafeInteger(version)) {
    throw new NereidError('INVALID_ARG', `failed to get model version from specified version string '${text}' (details: stol), version should be an integral value > 0`);
  }
  return version;
}
