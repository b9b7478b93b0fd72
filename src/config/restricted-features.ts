import { RESTRICTED_CATEGORIES, type RestrictedCategory, type RestrictedFeatures, type Restriction } from '../protocol/restricted-category.js';

export interface RestrictedFeatureFlag {
  /** The flag's name without dashes, as Triton's messages print it: `http-restricted-api`. */
  readonly optionName: string;
  /** What Triton calls a category in this flag's messages: `api` (HTTP) or `protocol` (gRPC). */
  readonly featureType: 'api' | 'protocol';
  /** Put before the key: '' over HTTP, `triton-grpc-protocol-` over gRPC (metadata keys are lowercase). */
  readonly keyPrefix: string;
}

/**
 * Parses every `<category>[,<category>...]:<key>=<value>` given to one flag, with Triton's checks and
 * messages (src/command_line_parser.cc ParseRestrictedFeatureOption and ParseGenericConfigOption):
 * a malformed value, an unknown category, and a category in two groups become `fail(message)`.
 */
export function parseRestrictedFeatures(entries: readonly string[], flag: RestrictedFeatureFlag, fail: (message: string) => Error): RestrictedFeatures {
  const features: Partial<Record<RestrictedCategory, Restriction>> = {};
  for (const entry of entries) {
    const nameEnd = entry.indexOf(':');
    const keyEnd = nameEnd < 0 ? -1 : entry.indexOf('=', nameEnd + 1);
    const names = entry.slice(0, nameEnd);
    const key = entry.slice(nameEnd + 1, keyEnd);
    const value = entry.slice(keyEnd + 1);
    if (nameEnd < 0 || keyEnd < 0 || names === '' || key === '' || value === '') {
      throw fail(`--${flag.optionName} option format is '<config name>:<setting>=<value>'. Got ${entry}`);
    }
    for (const name of names.split(',')) {
      const category = RESTRICTED_CATEGORIES.find((known) => known === name);
      if (category === undefined) {
        throw fail(`unknown restricted ${flag.featureType} '${name}'. The categories are ${RESTRICTED_CATEGORIES.join(', ')}`);
      }
      if (features[category] !== undefined) {
        throw fail(`restricted ${flag.featureType} '${name}' can not be specified in multiple config groups`);
      }
      features[category] = { key: flag.keyPrefix + key, value };
    }
  }
  return features;
}
