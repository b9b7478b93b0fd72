import type { Parameters } from '../protocol/parameters.js';

/**
 * Triton's header forwarding (`--http-header-forward-pattern`, `--grpc-header-forward-pattern`; the
 * pattern as config/header-forward-pattern.ts reads it): each header, or gRPC metadata entry, whose
 * name the pattern matches becomes a string parameter of the request, under its name, after the
 * parameters the request gives itself. This is the request parameters the headers matching `pattern`
 * make, or undefined when none matches.
 */
export function forwardedHeaders(pattern: RegExp, headers: Iterable<readonly [string, unknown]>): Parameters | undefined {
  let forwarded: Parameters | undefined;
  for (const [name, value] of headers) {
    if (!pattern.test(name)) continue;
    const text = Array.isArray(value) ? value.join(', ') : typeof value === 'string' ? value : undefined;
    if (text !== undefined) (forwarded ??= {})[name] = text;
  }
  return forwarded;
}

/** The request with the forwarded parameters after its own; the request itself when there are none. */
export function withForwarded<T extends { readonly parameters: Parameters }>(request: T, forwarded: Parameters | undefined): T {
  return forwarded === undefined ? request : { ...request, parameters: { ...request.parameters, ...forwarded } };
}
