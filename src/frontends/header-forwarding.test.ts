import assert from 'node:assert/strict';
import { test } from 'node:test';
import { forwardedHeaders, headLinePairs, rawHeaderPairs, withForwarded } from './header-forwarding.js';

test('forwards what the pattern matches, names as sent, but never a name the core reads or a triton_ one', () => {
  const everything = /.*/i;
  const headers: Array<[string, unknown]> = [
    ['Priority', 'high'],
    ['sequence_id', 'abc'],
    ['Timeout', '10'],
    ['triton_grpc_error', 'true'],
    ['My_Header', 'v'],
    ['listed', ['a', 'b']],
    ['binary-bin', Buffer.from('x')],
  ];
  assert.deepEqual(forwardedHeaders(everything, headers), { My_Header: 'v', listed: 'a, b' });
  assert.equal(forwardedHeaders(/^nothing$/, headers), undefined);
});

test("reads names in the client's case from node:http's rawHeaders and from the lane's head", () => {
  assert.deepEqual([...rawHeaderPairs(['Host', 'x', 'My_Header', 'v'])], [
    ['Host', 'x'],
    ['My_Header', 'v'],
  ]);
  assert.deepEqual([...headLinePairs('POST /v2 HTTP/1.1\r\nHost: x\r\nMy_Header:  spaced value \r\nContent-Length: 2')], [
    ['Host', 'x'],
    ['My_Header', 'spaced value'],
    ['Content-Length', '2'],
  ]);
});

test("a parameter the request gives itself keeps its value; nothing forwarded leaves the request as it is", () => {
  const request = { id: 'r', parameters: { own: 'body', other: 1 } };
  assert.deepEqual(withForwarded(request, { own: 'header', added: 'h' }).parameters, { own: 'body', other: 1, added: 'h' });
  assert.equal(withForwarded(request, undefined), request);
});
