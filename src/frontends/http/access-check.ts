import type { IncomingHttpHeaders } from 'node:http';
import type { RestrictedCategory } from '../../protocol/restricted-category.js';
import { NereidError } from '../../core/index.js';
import { type AccessPolicy, missingRestrictedKey } from '../access-policy.js';
import type { Route } from './routes.js';

type ModelAction = Extract<Route, { kind: 'model' }>['action'];

/** Triton's category of each per-model endpoint (src/http_server.cc: the category each handler checks). */
const MODEL_ACTION_CATEGORY: Record<ModelAction, RestrictedCategory> = {
  metadata: 'metadata',
  ready: 'health',
  config: 'model-config',
  infer: 'inference',
  generate: 'inference',
  generate_stream: 'inference',
  stats: 'statistics',
};

/** The restricted category of an HTTP route, as Triton files its endpoints. */
export function categoryOfRoute(route: Route): RestrictedCategory {
  switch (route.kind) {
    case 'server-metadata':
      return 'metadata';
    case 'health':
      return 'health';
    case 'statistics':
      return 'statistics';
    case 'repository-index':
    case 'repository-model':
      return 'model-repository';
    case 'logging':
      return 'logging';
    case 'shared-memory':
      return 'shared-memory';
    case 'trace-setting':
      return 'trace';
    case 'model':
      return MODEL_ACTION_CATEGORY[route.action];
  }
}

/** A request header's (first) value, by its lowercase name. */
export const headerValue = (headers: IncomingHttpHeaders, name: string): string | undefined => {
  const value = headers[name];
  return Array.isArray(value) ? value[0] : value;
};

/**
 * Lets a routed request through or throws: UNAUTHENTICATED (401, WWW-Authenticate) without the bearer
 * token, then PERMISSION_DENIED (403) with Triton's message when its category's header is missing or
 * has another value. The server's liveness and readiness (`/v2/health/live`, `/v2/health/ready`) need
 * no token, so that orchestrators' probes keep working; `--http-restricted-api=health:...` closes them.
 */
export function checkHttpAccess(route: Route, headers: IncomingHttpHeaders, policy: AccessPolicy): void {
  if (policy.authToken !== undefined && route.kind !== 'health') policy.authToken.check(headerValue(headers, 'authorization'));
  const key = missingRestrictedKey(policy.restrictedFeatures, categoryOfRoute(route), (name) => headerValue(headers, name));
  if (key !== undefined) throw new NereidError('PERMISSION_DENIED', `This API is restricted, expecting header '${key}'`);
}
