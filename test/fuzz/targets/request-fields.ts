import assert from 'node:assert/strict';
import type { IncomingMessage } from 'node:http';
import fc from 'fast-check';
import { AuthToken } from '../../../src/frontends/auth-token.js';
import { checkHttpAccess } from '../../../src/frontends/http/access-check.js';
import { CorsPolicy } from '../../../src/frontends/http/cors-policy.js';
import { matchRoute } from '../../../src/frontends/http/routes.js';
import { parseModelVersion } from '../../../src/frontends/model-version.js';
import { compressBody, decompressBody } from '../../../src/protocol/content-encoding.js';
import { anyString, byteMutation, mutateBytes } from '../arbitraries.js';
import { type FuzzTarget, expectClientError } from '../fuzz-target.js';

const TOKEN = 'secret-token';
const POLICY = {
  restrictedFeatures: { 'model-repository': { key: 'admin-key', value: 'yes' }, logging: { key: 'admin-key', value: 'yes' } },
  authToken: new AuthToken(TOKEN),
};

/** Paths under /v2 built from the route's own words, percent signs and arbitrary segments. */
const path = fc
  .array(
    fc.oneof(
      fc.constantFrom('v2', 'models', 'versions', 'infer', 'ready', 'config', 'stats', 'repository', 'index', 'load', 'unload', 'logging', 'health', 'live', 'generate', '', '%', '%zz', '%2F', '..', '1', '01', '99999999999999999999'),
      anyString,
    ),
    { maxLength: 6 },
  )
  .map((segments) => `/${segments.join('/')}`);

const method = fc.constantFrom('GET', 'POST', 'HEAD', 'PUT', 'DELETE', 'OPTIONS', 'PATCH');

const header = fc.option(fc.oneof(anyString, fc.constantFrom(`Bearer ${TOKEN}`, `bearer  ${TOKEN} `, 'Bearer', 'yes', 'application/json', 'text/plain; charset=utf-8', 'null')), { nil: undefined });

/** An IncomingMessage as the CORS policy reads it: method, url and headers. */
const request = (fields: { method: string; url: string; headers: Record<string, string | undefined> }): IncomingMessage =>
  ({ method: fields.method, url: fields.url, headers: Object.fromEntries(Object.entries(fields.headers).filter(([, value]) => value !== undefined)) }) as unknown as IncomingMessage;

export const requestFieldTargets: readonly FuzzTarget[] = [
  {
    parser: 'model version strings (model-version.ts)',
    name: 'any string: a version, none, or INVALID_ARG with Triton\'s text',
    property: () =>
      fc.property(fc.oneof(anyString, fc.stringMatching(/^-?[0-9]{0,25}$/)), (text) => {
        const version = expectClientError(() => parseModelVersion(text));
        if (version !== undefined) assert.ok(Number.isSafeInteger(version) && version >= 0 && String(version) === text.replace(/^0+(?=.)/, ''));
      }),
  },
  {
    parser: 'HTTP routes (routes.ts)',
    name: 'any method and path: a route, or NOT_FOUND, INVALID_ARG or UNSUPPORTED (405)',
    property: () => fc.property(method, path, (verb, url) => void expectClientError(() => matchRoute(verb, url), ['NOT_FOUND', 'INVALID_ARG', 'UNSUPPORTED'])),
  },
  {
    parser: 'auth and restricted headers (auth-token.ts, access-check.ts)',
    name: 'any Authorization and restricted header on any route: let through only with both, else UNAUTHENTICATED or PERMISSION_DENIED',
    property: () =>
      fc.property(method, path, header, header, (verb, url, authorization, adminKey) => {
        const route = expectClientError(() => matchRoute(verb, url), ['NOT_FOUND', 'INVALID_ARG', 'UNSUPPORTED']);
        if (route === undefined) return;
        const headers = { ...(authorization !== undefined ? { authorization } : {}), ...(adminKey !== undefined ? { 'admin-key': adminKey } : {}) };
        const passed = expectClientError(() => (checkHttpAccess(route, headers, POLICY), true), ['UNAUTHENTICATED', 'PERMISSION_DENIED']);
        if (passed === true && route.kind !== 'health') assert.match(authorization ?? '', new RegExp(`^Bearer +${TOKEN} *$`, 'i'));
      }),
  },
  {
    parser: 'cross-origin headers (cors-policy.ts)',
    name: 'any Origin, content type and preflight: an answer, or INVALID_ARG (403)',
    property: () =>
      fc.property(method, path, header, header, fc.boolean(), (verb, url, origin, contentType, isAnyOrigin) => {
        const policy = new CorsPolicy(isAnyOrigin ? ['*'] : ['https://app.example']);
        const req = request({ method: verb, url, headers: { origin, 'content-type': contentType } });
        expectClientError(() => policy.preflight(req));
        const route = expectClientError(() => matchRoute(verb, url), ['NOT_FOUND', 'INVALID_ARG', 'UNSUPPORTED']);
        if (route !== undefined) expectClientError(() => policy.check(req, route));
        policy.responseHeaders(req);
      }),
  },
];

/**
 * Content-Encoding: zlib refuses bytes that are not gzip or deflate with an Error that http-server.ts
 * turns into INVALID_ARG; the property checks that it always refuses or decodes, within the limit.
 */
export const contentEncodingTargets: readonly FuzzTarget[] = [
  {
    parser: 'Content-Encoding (content-encoding.ts)',
    name: 'arbitrary and mutated gzip/deflate bodies: the bytes within maxOutputLength, or an Error',
    property: () =>
      fc.asyncProperty(fc.constantFrom('gzip' as const, 'deflate' as const), fc.uint8Array({ maxLength: 64 }), fc.array(byteMutation, { maxLength: 2 }), fc.boolean(), async (encoding, payload, mutations, isCompressed) => {
        const body = isCompressed ? mutateBytes(await compressBody[encoding](Buffer.from(payload)), mutations) : Buffer.from(payload);
        try {
          const out = await decompressBody[encoding](body, 256);
          assert.ok(out.byteLength <= 256);
          if (mutations.length === 0 && isCompressed) assert.deepEqual(out, Buffer.from(payload));
        } catch (error) {
          assert.ok(error instanceof Error, String(error));
        }
      }),
  },
];
