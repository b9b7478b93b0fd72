import assert from 'node:assert/strict';
import { test } from 'node:test';
import { NereidError } from '../../core/index.js';
import { HTTP_STATUS, STATUS_CODES } from '../../protocol/status-code.js';
import { silentLogger } from '../../logging/logger.js';
import { errorReply } from './errors.js';

test("every status code maps to Triton's HTTP status", () => {
  assert.deepEqual(
    Object.fromEntries(STATUS_CODES.map((code) => [code, HTTP_STATUS[code]])),
    { INVALID_ARG: 400, NOT_FOUND: 404, UNAVAILABLE: 503, UNSUPPORTED: 501, ALREADY_EXISTS: 400, CANCELLED: 400, INTERNAL: 500, UNKNOWN: 400, UNAUTHENTICATED: 401, PERMISSION_DENIED: 403 },
  );
});

test('a NereidError becomes {"error"} with its status; anything else is 500', () => {
  const json = { 'content-type': 'application/json' };
  assert.deepEqual(errorReply(new NereidError('NOT_FOUND', 'no such version'), silentLogger), { status: 404, headers: json, body: '{"error":"no such version"}' });
  assert.deepEqual(errorReply(new TypeError('boom'), silentLogger), { status: 500, headers: json, body: '{"error":"internal error: boom"}' });
});

test('the reason, not the message, picks a status beyond the table and the headers that say how to retry', () => {
  assert.deepEqual(
    errorReply(new NereidError('UNSUPPORTED', "'/v2/health/live' takes GET, not POST", { reason: 'METHOD_NOT_ALLOWED', details: { allow: 'GET' } }), silentLogger),
    { status: 405, headers: { 'content-type': 'application/json', allow: 'GET' }, body: `{"error":"'/v2/health/live' takes GET, not POST"}` },
  );
  assert.deepEqual(
    errorReply(new NereidError('UNSUPPORTED', "unsupported Content-Encoding 'br'", { reason: 'UNSUPPORTED_CONTENT_ENCODING', details: { accepted: 'gzip, deflate' } }), silentLogger),
    { status: 501, headers: { 'content-type': 'application/json', 'accept-encoding': 'gzip, deflate' }, body: `{"error":"unsupported Content-Encoding 'br'"}` },
  );
  assert.deepEqual(
    errorReply(new NereidError('UNSUPPORTED', 'mentions Content-Encoding but has no reason'), silentLogger),
    { status: 501, headers: { 'content-type': 'application/json' }, body: '{"error":"mentions Content-Encoding but has no reason"}' },
  );
});
