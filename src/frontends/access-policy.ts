import type { RestrictedCategory, RestrictedFeatures } from '../protocol/restricted-category.js';
import type { AuthToken } from './auth-token.js';

/** Who may call what on one front end: Triton's restricted categories and, beyond Triton, a bearer token. */
export interface AccessPolicy {
  readonly restrictedFeatures: RestrictedFeatures;
  /** Undefined: no token asked for (the default). */
  readonly authToken: AuthToken | undefined;
}

export const OPEN_ACCESS: AccessPolicy = { restrictedFeatures: {}, authToken: undefined };

/**
 * The key a restricted category asks for when the request does not carry it with the expected value
 * (Triton's RespondIfRestricted and ExecutePrecondition); undefined when the category is open or the
 * value matches. `valueOf` reads a header or metadata value by its lowercase name.
 */
export function missingRestrictedKey(
  features: RestrictedFeatures,
  category: RestrictedCategory,
  valueOf: (lowercaseKey: string) => string | undefined,
): string | undefined {
  const restriction = features[category];
  if (restriction === undefined) return undefined;
  return valueOf(restriction.key.toLowerCase()) === restriction.value ? undefined : restriction.key;
}
