import { NereidError } from '../../core/index.js';

/** What a request path names, after Triton's routing (src/http_server.cc). */
export type Route =
  | { readonly kind: 'server-metadata' }
  | { readonly kind: 'health'; readonly check: 'live' | 'ready' }
  | { readonly kind: 'statistics'; readonly modelName: undefined; readonly modelVersion: undefined }
  | { readonly kind: 'repository-index' }
  | { readonly kind: 'logging' }
  | { readonly kind: 'trace-setting'; readonly modelName: string | undefined }
  | { readonly kind: 'repository-model'; readonly action: 'load' | 'unload'; readonly modelName: string }
  | {
      readonly kind: 'shared-memory';
      readonly memory: 'system' | 'cuda';
      readonly action: 'status' | 'register' | 'unregister';
      /** Undefined: every region (status, unregister). */
      readonly regionName: string | undefined;
    }
  | {
      readonly kind: 'model';
      readonly action: 'metadata' | 'ready' | 'config' | 'infer' | 'generate' | 'generate_stream' | 'stats';
      readonly modelName: string;
      readonly modelVersion: number | undefined;
    };

const MODEL_PATH = /^\/v2\/models\/([^/]+)(?:\/versions\/([^/]+))?(?:\/(ready|config|infer|generate|generate_stream|stats))?\/?$/;
const REPOSITORY_MODEL_PATH = /^\/v2\/repository\/models\/([^/]+)\/(load|unload)$/;
const SHARED_MEMORY_PATH = /^\/v2\/(system|cuda)sharedmemory(?:\/region\/([^/]+))?\/(status|register|unregister)$/;
const MODEL_TRACE_PATH = /^\/v2\/models\/([^/]+)\/trace\/setting$/;
const METHODS: Record<string, 'GET' | 'POST'> = {
  'server-metadata': 'GET',
  health: 'GET',
  statistics: 'GET',
  'repository-index': 'POST',
  logging: 'GET',
  'trace-setting': 'GET',
  'repository-model': 'POST',
  status: 'GET',
  register: 'POST',
  unregister: 'POST',
  stats: 'GET',
  metadata: 'GET',
  ready: 'GET',
  config: 'GET',
  infer: 'POST',
  generate: 'POST',
  generate_stream: 'POST',
};

function decodeSegment(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    throw new NereidError('INVALID_ARG', `malformed percent-encoding in path segment '${segment}'`);
  }
}

/**
 * Matches a method and path to a route, or throws: NOT_FOUND (HTTP 404) for an
 * unknown path, UNSUPPORTED (METHOD_NOT_ALLOWED, HTTP 405 with Allow) for a method the path does not take.
 */
export function matchRoute(method: string, path: string): Route {
  let route: Route | undefined;
  if (path === '/v2' || path === '/v2/') route = { kind: 'server-metadata' };
  else if (path === '/v2/models/stats') route = { kind: 'statistics', modelName: undefined, modelVersion: undefined };
  else if (path === '/v2/repository/index') route = { kind: 'repository-index' };
  else if (path === '/v2/logging') route = { kind: 'logging' };
  else if (path === '/v2/trace/setting') route = { kind: 'trace-setting', modelName: undefined };
  else if (MODEL_TRACE_PATH.test(path)) route = { kind: 'trace-setting', modelName: decodeSegment(MODEL_TRACE_PATH.exec(path)![1]!) };
  else if (REPOSITORY_MODEL_PATH.test(path)) {
    const [, name, action] = REPOSITORY_MODEL_PATH.exec(path)!;
    route = { kind: 'repository-model', action: action as 'load' | 'unload', modelName: decodeSegment(name!) };
  }
  else if (SHARED_MEMORY_PATH.test(path)) {
    const [, memory, region, action] = SHARED_MEMORY_PATH.exec(path)!;
    route = {
      kind: 'shared-memory',
      memory: memory as 'system' | 'cuda',
      action: action as 'status' | 'register' | 'unregister',
      regionName: region === undefined ? undefined : decodeSegment(region),
    };
  }
  else if (path === '/v2/health/live') route = { kind: 'health', check: 'live' };
  else if (path === '/v2/health/ready') route = { kind: 'health', check: 'ready' };
  else {
    const match = MODEL_PATH.exec(path);
    if (match !== null) {
      const [, name, version, action] = match;
      if (version !== undefined && !/^[0-9]+$/.test(version)) {
        throw new NereidError('INVALID_ARG', `model version in the path must be a number, got '${decodeSegment(version)}'`);
      }
      route = {
        kind: 'model',
        action: (action as Extract<Route, { kind: 'model' }>['action'] | undefined) ?? 'metadata',
        modelName: decodeSegment(name!),
        modelVersion: version === undefined ? undefined : Number(version),
      };
    }
  }
  if (route === undefined) throw new NereidError('NOT_FOUND', `no endpoint at '${path}'; see the KServe v2 paths under /v2`);
  const allowed = METHODS[route.kind === 'model' || route.kind === 'shared-memory' ? route.action : route.kind]!;
  // The logging and trace settings are read with GET and changed with POST.
  const isLoggingUpdate = (route.kind === 'logging' || route.kind === 'trace-setting') && method === 'POST';
  if (method !== allowed && !(method === 'HEAD' && allowed === 'GET') && !isLoggingUpdate) {
    throw new NereidError('UNSUPPORTED', `'${path}' takes ${allowed}, not ${method}`, { reason: 'METHOD_NOT_ALLOWED', details: { allow: allowed } });
  }
  return route;
}

/** How many method-and-path pairs routeOf remembers; it starts over when full. */
const MAX_REMEMBERED_ROUTES = 256;
const rememberedRoutes = new Map<string, Route>();

/**
 * matchRoute, remembering the last pairs matched: a client calls the same few paths again and again,
 * and matching tries up to five regular expressions. A path that fails is matched again each time.
 */
export function routeOf(method: string, path: string): Route {
  const key = `${method} ${path}`;
  let route = rememberedRoutes.get(key);
  if (route === undefined) {
    route = matchRoute(method, path);
    if (rememberedRoutes.size >= MAX_REMEMBERED_ROUTES) rememberedRoutes.clear();
    rememberedRoutes.set(key, route);
  }
  return route;
}
