import assert from 'node:assert/strict';
import { test } from 'node:test';
import { status } from '@grpc/grpc-js';
import { NereidError } from '../../core/index.js';
import { GRPC_STATUS, STATUS_CODES } from '../../protocol/status-code.js';
import { silentLogger } from '../../logging/logger.js';
import { grpcError } from './errors.js';

test("every status code maps to Triton's gRPC code", () => {
  assert.deepEqual(Object.fromEntries(STATUS_CODES.map((code) => [code, GRPC_STATUS[code]])), {
    INVALID_ARG: status.INVALID_ARGUMENT,
    NOT_FOUND: status.NOT_FOUND,
    UNAVAILABLE: status.UNAVAILABLE,
    UNSUPPORTED: status.UNIMPLEMENTED,
    ALREADY_EXISTS: status.ALREADY_EXISTS,
    CANCELLED: status.CANCELLED,
    INTERNAL: status.INTERNAL,
    UNKNOWN: status.UNKNOWN,
    UNAUTHENTICATED: status.UNAUTHENTICATED,
    PERMISSION_DENIED: status.PERMISSION_DENIED,
  });
});

test('a NereidError keeps its message; anything else is INTERNAL', () => {
  assert.deepEqual(grpcError(new NereidError('UNAVAILABLE', 'not ready'), silentLogger), { code: status.UNAVAILABLE, details: 'not ready' });
  assert.deepEqual(grpcError(new RangeError('boom'), silentLogger), { code: status.INTERNAL, details: 'internal error: boom' });
});

test('a message with a lone surrogate gets U+FFFD in its place, which grpc-js can write (found by test/fuzz: the server crashed)', () => {
  const { details } = grpcError(new NereidError('INVALID_ARG', 'bad \ud83d and \ude00, kept \ud83d\ude00'), silentLogger);
  assert.equal(details, 'bad \ufffd and \ufffd, kept \ud83d\ude00');
  assert.doesNotThrow(() => encodeURI(details));
});
