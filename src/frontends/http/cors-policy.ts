import type { IncomingHttpHeaders, OutgoingHttpHeaders } from 'node:http';
import { isIP } from 'node:net';
import { NereidError } from '../../core/index.js';
import { type Reply, emptyReply } from './reply.js';
import type { Route } from './routes.js';

/**
 * Content types a browser sends from any web page without a CORS preflight (the Fetch standard's
 * CORS-safelisted request headers): a POST with one of them can come from a page the user merely visits.
 */
const SIMPLE_CONTENT_TYPES: ReadonlySet<string> = new Set(['text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data']);

const PREFLIGHT_MAX_AGE_SECS = 600;

/** What the policy reads of a request: node:http's IncomingMessage, or the HTTP/1.1 lane's request. */
export interface CorsRequest {
  readonly method?: string | undefined;
  readonly url?: string | undefined;
  readonly headers: IncomingHttpHeaders;
}

/**
 * Cross-origin safety of the HTTP front end (`--http-cors-origins`). Browsers let any web page POST to
 * localhost with a simple content type and no preflight, so:
 * - a request whose `Origin` is not allowed is refused on every POST (the routes that change state or
 *   cost compute); GETs are answered, without the headers that would let the page read them;
 * - a POST outside `/v2/models/...` (repository, logging, and every control route after them) with a
 *   simple content type is refused unless its Origin is allowed; tritonclient sends `application/json`,
 *   `application/octet-stream` or none, and no Origin. Inference keeps taking any content type, as
 *   `curl -d` sends a form type and Triton's docs infer that way;
 * - allowed origins get their preflight (OPTIONS) answered and `Access-Control-Allow-Origin` on replies;
 * - a page of this server itself (the dashboard) is same-origin: its Origin is `http(s)://` and the Host
 *   it asked for. Only when that host is an IP address or `localhost`: a name could be a DNS-rebinding
 *   attacker's (a page of evil.example whose name now resolves to this server), so a server reached by
 *   name lists its own origin in --http-cors-origins for the dashboard's actions.
 */
export class CorsPolicy {
  readonly #origins: ReadonlySet<string>;
  readonly #isAnyOriginAllowed: boolean;

  /** `origins`: exact origins (`https://app.example:8443`), or `*` for any; none by default. */
  constructor(origins: readonly string[]) {
    this.#origins = new Set(origins);
    this.#isAnyOriginAllowed = this.#origins.has('*');
  }

  /** The answer to a CORS preflight (OPTIONS with an Origin), or undefined when `req` is not one. */
  preflight(req: CorsRequest): Reply | undefined {
    const origin = req.headers.origin;
    if (req.method !== 'OPTIONS' || origin === undefined) return undefined;
    if (!this.#isAllowed(origin)) throw refused(origin);
    const requested = req.headers['access-control-request-headers'];
    return {
      ...emptyReply(204),
      headers: {
        ...this.responseHeaders(req),
        'access-control-allow-methods': 'GET, HEAD, POST',
        ...(requested !== undefined ? { 'access-control-allow-headers': requested } : {}),
        'access-control-max-age': String(PREFLIGHT_MAX_AGE_SECS),
      },
    };
  }

  /** Throws (HTTP 403) for a cross-origin browser request that `route` must not take. */
  check(req: CorsRequest, route: Route): void {
    if (req.method !== 'POST') return;
    const origin = req.headers.origin;
    if (origin !== undefined && !this.#isAllowed(origin) && !isSameOrigin(req, origin)) throw refused(origin);
    if (route.kind === 'model' || origin !== undefined) return;
    const contentType = (req.headers['content-type'] ?? '').split(';', 1)[0]!.trim().toLowerCase();
    if (SIMPLE_CONTENT_TYPES.has(contentType)) {
      throw new NereidError(
        'INVALID_ARG',
        `content type '${contentType}' is refused on POST ${(req.url ?? '/').split('?', 1)[0]}: any web page can send it from a browser; send application/json (curl: -H 'Content-Type: application/json')`,
        { reason: 'CROSS_ORIGIN_REFUSED' },
      );
    }
  }

  /** The headers that let an allowed origin's page read the reply; none for other requests. */
  responseHeaders(req: CorsRequest): OutgoingHttpHeaders {
    const origin = req.headers.origin;
    if (origin === undefined || !this.#isAllowed(origin)) return {};
    return {
      'access-control-allow-origin': this.#isAnyOriginAllowed ? '*' : origin,
      'access-control-expose-headers': 'inference-header-content-length',
      vary: 'Origin',
    };
  }

  #isAllowed(origin: string): boolean {
    return this.#isAnyOriginAllowed || this.#origins.has(origin.toLowerCase());
  }
}

/** Whether `origin` is the host the request was sent to, when that host is an address no DNS answer can stand for. */
function isSameOrigin(req: CorsRequest, origin: string): boolean {
  const host = req.headers.host;
  if (host === undefined || (origin !== `http://${host}` && origin !== `https://${host}`)) return false;
  const hostname = new URL(origin).hostname.replace(/^\[(.*)\]$/, '$1');
  return hostname === 'localhost' || isIP(hostname) !== 0;
}

const refused = (origin: string): NereidError =>
  new NereidError('INVALID_ARG', `cross-origin request from '${origin}' refused; the origins allowed are set with --http-cors-origins`, {
    reason: 'CROSS_ORIGIN_REFUSED',
  });
