import type { Parameters } from '../protocol/parameters.js';

/**
 * Parameters the core itself reads (validate-request.ts, the schedulers, the front ends): a header of
 * that name is not forwarded. Triton passes forwarded headers to the backend as string parameters
 * only, and its core takes the sequence controls, priority and timeout from fields of their own, so a
 * header can never change them there; here they live among the parameters.
 */
const READ_BY_THE_CORE: ReadonlySet<string> = new Set(['sequence_id', 'sequence_start', 'sequence_end', 'priority', 'timeout', 'binary_data_output']);

/**
 * Triton's header forwarding (`--http-header-forward-pattern`, `--grpc-header-forward-pattern`; the
 * pattern as config/header-forward-pattern.ts reads it): each header, or gRPC metadata entry, whose
 * name, in the client's case, the pattern matches becomes a string parameter of the request, under
 * that name. Names the core reads (READ_BY_THE_CORE) and Triton's reserved `triton_` prefix are left
 * out. This is the request parameters the headers matching `pattern` make, or undefined when none does.
 */
export function forwardedHeaders(pattern: RegExp, headers: Iterable<readonly [string, unknown]>): Parameters | undefined {
  let forwarded: Parameters | undefined;
  for (const [name, value] of headers) {
    const lowerName = name.toLowerCase();
    if (READ_BY_THE_CORE.has(lowerName) || lowerName.startsWith('triton_') || !pattern.test(name)) continue;
    const text = Array.isArray(value) ? value.join(', ') : typeof value === 'string' ? value : undefined;
    if (text !== undefined) (forwarded ??= {})[name] = text;
  }
  return forwarded;
}

/** node:http's rawHeaders (name, value, name, value...) as pairs, the names in the client's case. */
export function* rawHeaderPairs(rawHeaders: readonly string[]): Iterable<readonly [string, string]> {
  for (let index = 0; index + 1 < rawHeaders.length; index += 2) yield [rawHeaders[index]!, rawHeaders[index + 1]!];
}

/** The header lines of a request head (CRLF-separated, the request line first) as pairs, the names as sent. */
export function* headLinePairs(head: string): Iterable<readonly [string, string]> {
  for (const line of head.split('\r\n').slice(1)) {
    const colon = line.indexOf(':');
    if (colon > 0) yield [line.slice(0, colon), line.slice(colon + 1).trim()];
  }
}

/**
 * The request with the forwarded parameters added, the value it gives itself kept where a name is both
 * (Triton passes both to the backend); the request itself when nothing is forwarded.
 */
export function withForwarded<T extends { readonly parameters: Parameters }>(request: T, forwarded: Parameters | undefined): T {
  return forwarded === undefined ? request : { ...request, parameters: { ...forwarded, ...request.parameters } };
}
