import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { type ParsedResponse, ResponseParseError, ResponseParser } from './http1-parser.js';

const bytes = (text: string) => Buffer.from(text, 'latin1');

/** The responses as plain values, bodies as text, for deepEqual. */
const plain = (responses: readonly ParsedResponse[]) =>
  responses.map(({ status, headers, body, isReusable }) => ({ status, headers, body: body.toString('latin1'), isReusable }));

const parseAll = (text: string) => {
  const parser = new ResponseParser();
  const responses = parser.push(bytes(text));
  return { parser, responses: plain(responses) };
};

describe('the HTTP/1.1 response parser', () => {
  test('a Content-Length body; header names in lower case, values trimmed, repeats joined', () => {
    const { parser, responses } = parseAll(
      'HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 11\r\nX-Seen:  a \r\nx-seen: b\r\n\r\n{"ok":true}',
    );
    assert.deepEqual(responses, [
      { status: 200, headers: { 'content-type': 'application/json', 'content-length': '11', 'x-seen': 'a, b' }, body: '{"ok":true}', isReusable: true },
    ]);
    assert.equal(parser.isInResponse, false);
    assert.equal(parser.end(), undefined);
  });

  test('a status line without a reason phrase, and Content-Length: 0', () => {
    assert.deepEqual(parseAll('HTTP/1.1 404\r\nContent-Length: 0\r\n\r\n').responses, [
      { status: 404, headers: { 'content-length': '0' }, body: '', isReusable: true },
    ]);
  });

  test('a chunked body: chunk extensions ignored, hex sizes, trailers skipped', () => {
    const { parser, responses } = parseAll(
      'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n' +
        '5;name=value\r\nhello\r\n' +
        'A\r\n, world!!!\r\n' +
        '1 ; ext\r\n.\r\n' +
        '0\r\nX-Checksum: abc\r\nX-Other: 1\r\n\r\n',
    );
    assert.deepEqual(responses, [
      { status: 200, headers: { 'transfer-encoding': 'chunked' }, body: 'hello, world!!!.', isReusable: true },
    ]);
    assert.equal(parser.isInResponse, false);
  });

  test('chunked wins over Content-Length', () => {
    assert.deepEqual(parseAll('HTTP/1.1 200 OK\r\nContent-Length: 99\r\nTransfer-Encoding: gzip, chunked\r\n\r\n2\r\nab\r\n0\r\n\r\n').responses, [
      { status: 200, headers: { 'content-length': '99', 'transfer-encoding': 'gzip, chunked' }, body: 'ab', isReusable: true },
    ]);
  });

  test('1xx responses are skipped, also when they arrive on their own', () => {
    assert.deepEqual(parseAll('HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: </a>\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok').responses, [
      { status: 200, headers: { 'content-length': '2' }, body: 'ok', isReusable: true },
    ]);

    const parser = new ResponseParser();
    assert.deepEqual(parser.push(bytes('HTTP/1.1 100 Continue\r\n\r\n')), []);
    assert.equal(parser.isInResponse, false);
    assert.deepEqual(plain(parser.push(bytes('HTTP/1.1 201 Created\r\nContent-Length: 1\r\n\r\nx'))), [
      { status: 201, headers: { 'content-length': '1' }, body: 'x', isReusable: true },
    ]);
  });

  test('204 and 304 have no body, whatever their headers say; the next response follows at once', () => {
    assert.deepEqual(
      parseAll('HTTP/1.1 204 No Content\r\nContent-Length: 5\r\n\r\nHTTP/1.1 304 Not Modified\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nabc').responses,
      [
        { status: 204, headers: { 'content-length': '5' }, body: '', isReusable: true },
        { status: 304, headers: {}, body: '', isReusable: true },
        { status: 200, headers: { 'content-length': '3' }, body: 'abc', isReusable: true },
      ],
    );
  });

  test('a body without length or chunking runs until the connection closes: end() completes it', () => {
    const parser = new ResponseParser();
    assert.deepEqual(parser.push(bytes('HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\nfirst ')), []);
    assert.deepEqual(parser.push(bytes('second')), []);
    assert.equal(parser.isInResponse, true);
    const response = parser.end();
    assert.deepEqual(plain([response!]), [{ status: 200, headers: { 'content-type': 'text/plain' }, body: 'first second', isReusable: false }]);
    assert.equal(parser.isInResponse, false);
    assert.equal(parser.end(), undefined);
  });

  test('an until-close body may be empty', () => {
    const parser = new ResponseParser();
    assert.deepEqual(parser.push(bytes('HTTP/1.0 500 Internal Server Error\r\n\r\n')), []);
    assert.deepEqual(plain([parser.end()!]), [{ status: 500, headers: {}, body: '', isReusable: false }]);
  });

  test('several responses in one push, each with its own framing', () => {
    const { parser, responses } = parseAll(
      'HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\na' +
        'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1\r\nb\r\n0\r\n\r\n' +
        'HTTP/1.1 400 Bad Request\r\nContent-Length: 3\r\n\r\nc',
    );
    assert.deepEqual(responses, [
      { status: 200, headers: { 'content-length': '1' }, body: 'a', isReusable: true },
      { status: 200, headers: { 'transfer-encoding': 'chunked' }, body: 'b', isReusable: true },
    ]);
    assert.equal(parser.isInResponse, true, 'the third has its head and one byte of three');
    assert.deepEqual(plain(parser.push(bytes('cc'))), [{ status: 400, headers: { 'content-length': '3' }, body: 'ccc', isReusable: true }]);
  });

  test('responses split byte by byte come out the same as in one piece', () => {
    const text =
      'HTTP/1.1 100 Continue\r\n\r\n' +
      'HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello' +
      'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3;x=y\r\nabc\r\n10\r\n0123456789abcdef\r\n0\r\nTrailer: t\r\n\r\n' +
      'HTTP/1.1 204 No Content\r\n\r\n' +
      'HTTP/1.1 200 OK\r\nConnection: close\r\n\r\ntail';
    const whole = new ResponseParser();
    const expected = plain([...whole.push(bytes(text)), whole.end()!]);

    const parser = new ResponseParser();
    const responses: ParsedResponse[] = [];
    for (const byte of bytes(text)) responses.push(...parser.push(Buffer.from([byte])));
    responses.push(parser.end()!);
    assert.deepEqual(plain(responses), expected);
    assert.deepEqual(
      expected.map(({ status, body, isReusable }) => [status, body, isReusable]),
      [
        [200, 'hello', true],
        [200, 'abc0123456789abcdef', true],
        [204, '', true],
        [200, 'tail', false],
      ],
    );
  });

  test('reusability: Connection: close ends HTTP/1.1, HTTP/1.0 needs keep-alive', () => {
    const isReusable = (head: string) => parseAll(`${head}Content-Length: 0\r\n\r\n`).responses[0]!.isReusable;
    assert.equal(isReusable('HTTP/1.1 200 OK\r\n'), true);
    assert.equal(isReusable('HTTP/1.1 200 OK\r\nConnection: keep-alive\r\n'), true);
    assert.equal(isReusable('HTTP/1.1 200 OK\r\nConnection: close\r\n'), false);
    assert.equal(isReusable('HTTP/1.1 200 OK\r\nConnection: Upgrade, CLOSE\r\n'), false);
    assert.equal(isReusable('HTTP/1.0 200 OK\r\n'), false);
    assert.equal(isReusable('HTTP/1.0 200 OK\r\nConnection: Keep-Alive\r\n'), true);
    assert.equal(isReusable('HTTP/1.0 200 OK\r\nConnection: close\r\n'), false);
  });

  test('a bad status line', () => {
    for (const [line, shown] of [
      ['HTTP/2 200 OK', '"HTTP/2 200 OK"'],
      ['HTTP/1.1 20 OK', '"HTTP/1.1 20 OK"'],
      ['ICY 200 OK', '"ICY 200 OK"'],
      ['HTTP/1.1 200OK', '"HTTP/1.1 200OK"'],
    ] as const) {
      assert.throws(() => new ResponseParser().push(bytes(`${line}\r\nContent-Length: 0\r\n\r\n`)), {
        name: 'ResponseParseError',
        message: `not an HTTP/1.x status line: ${shown}`,
      });
    }
    assert.throws(() => new ResponseParser().push(bytes(`${'x'.repeat(200)}\r\n\r\n`)), {
      message: `not an HTTP/1.x status line: "${'x'.repeat(80)}"`,
    });
  });

  test('a malformed header line', () => {
    assert.throws(() => new ResponseParser().push(bytes('HTTP/1.1 200 OK\r\nContent-Length 0\r\n\r\n')), {
      name: 'ResponseParseError',
      message: 'malformed header line: "Content-Length 0"',
    });
    assert.throws(() => new ResponseParser().push(bytes('HTTP/1.1 200 OK\r\n: value\r\n\r\n')), {
      message: 'malformed header line: ": value"',
    });
  });

  test('a bad Content-Length', () => {
    for (const [value, shown] of [
      ['-1', '"-1"'],
      ['abc', '"abc"'],
      ['1.5', '"1.5"'],
      ['5, 5', '"5, 5"'],
      ['99999999999999999999', '"99999999999999999999"'],
    ]) {
      assert.throws(() => new ResponseParser().push(bytes(`HTTP/1.1 200 OK\r\nContent-Length: ${value}\r\n\r\n`)), {
        name: 'ResponseParseError',
        message: `invalid Content-Length ${shown}`,
      });
    }
  });

  test('a bad chunk size', () => {
    const head = 'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n';
    for (const [size, shown] of [
      ['xyz', '"xyz"'],
      ['', '""'],
      ['-1', '"-1"'],
      ['1234567890abc', '"1234567890abc"'],
    ]) {
      assert.throws(() => new ResponseParser().push(bytes(`${head}${size}\r\n`)), {
        name: 'ResponseParseError',
        message: `malformed chunk size ${shown}`,
      });
    }
    assert.throws(() => new ResponseParser().push(bytes(`${head}1\r\na\r\nzz\r\n`)), { message: 'malformed chunk size "zz"' });
  });

  test('a head longer than 64 KiB', () => {
    const parser = new ResponseParser();
    assert.deepEqual(parser.push(bytes(`HTTP/1.1 200 OK\r\nX-Big: ${'a'.repeat(64 * 1024 - 30)}`)), []);
    assert.throws(() => parser.push(bytes('a'.repeat(100))), {
      name: 'ResponseParseError',
      message: 'the response head is longer than 65536 bytes',
    });
  });

  test('the connection closes in the middle of a response', () => {
    for (const text of [
      'HTTP/1.1 200 OK\r\nContent-Le',
      'HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nshort',
      'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nab',
      'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n',
    ]) {
      const parser = new ResponseParser();
      assert.deepEqual(parser.push(bytes(text)), []);
      assert.equal(parser.isInResponse, true);
      assert.throws(() => parser.end(), (error: unknown) => {
        assert.ok(error instanceof ResponseParseError);
        assert.equal(error.message, 'the connection closed in the middle of a response');
        return true;
      });
    }
  });
});
