/**
 * Triton's groups of endpoints that `--http-restricted-api` and `--grpc-restricted-protocol` can put
 * behind a header (src/restricted_features.h, docs/customization_guide/inference_protocols.md,
 * "Limit Endpoint Access"); each front end says which category each of its endpoints belongs to.
 */
export const RESTRICTED_CATEGORIES = [
  'health',
  'metadata',
  'inference',
  'shared-memory',
  'model-config',
  'model-repository',
  'statistics',
  'trace',
  'logging',
] as const;

export type RestrictedCategory = (typeof RESTRICTED_CATEGORIES)[number];

/** The header (HTTP) or metadata key (gRPC) a restricted category asks for, and the value it must carry. */
export interface Restriction {
  /** As the operator wrote it (after the gRPC prefix); matched without regard to case, as header names are. */
  readonly key: string;
  readonly value: string;
}

/** The restricted categories of one front end; a category not here is open. */
export type RestrictedFeatures = Readonly<Partial<Record<RestrictedCategory, Restriction>>>;
