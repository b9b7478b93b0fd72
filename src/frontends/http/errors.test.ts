import assert from 'node:assert/strict';
import { test } from 'node:test';
import { NereidError } from '../../core/index.js';
import { HTTP_STATUS, STATUS_CODES } from '../../protocol/status-code.js';
import { silentLogger } from '../../logging/logger.js';
import { errorReply } from './errors.js';

test("every status code maps to Triton's HTTP status", () => {
  assert.deepEqual(
    Object.fromEntries(STATUS_CODES.map((code) => [code, HTTP_STATUS[code]])),
    { INVALID_ARG: 400, NOT_FOUND: 404, UNAVAILABLE: 503, UNSUPPORTED: 501, ALREADY_EXISTS: 400, CANCELLED: 400, INTERNAL: 500, UNKNOWN: 400 },
  );
});

test('a NereidError becomes {"error"} with its status; anything else is 500', () => {
  assert.deepEqual(errorReply(new NereidError('NOT_FOUND', 'no such version'), silentLogger), { status: 404, body: '{"error":"no such version"}' });
  assert.deepEqual(errorReply(new TypeError('boom'), silentLogger), { status: 500, body: '{"error":"internal error: boom"}' });
});
