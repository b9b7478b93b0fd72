import assert from 'node:assert/strict';
import { test } from 'node:test';
import { GRPC_STATUS, HTTP_STATUS, STATUS_CODES } from '../protocol/status-code.js';
import { statusFromGrpc, statusFromHttp } from './errors.js';

test("the client reads back every status the server's tables write", () => {
  for (const code of STATUS_CODES) {
    // gRPC has a code per status; HTTP 400 stands for four of them, read as INVALID_ARG.
    assert.equal(statusFromGrpc(GRPC_STATUS[code]), code, code);
    const expected = HTTP_STATUS[code] === 400 ? 'INVALID_ARG' : code;
    assert.equal(statusFromHttp(HTTP_STATUS[code]), expected, code);
  }
  assert.equal(statusFromHttp(418), 'UNKNOWN');
  assert.equal(statusFromGrpc(8), 'UNKNOWN');
});
