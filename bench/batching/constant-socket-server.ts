/**
 * constant-server.ts without node:http, a baseline of bench/http-floor.ts: a node:net server that finds
 * each request's head and Content-Length body in what it reads, as the HTTP/1.1 lane does
 * (src/frontends/http/http1-lane.ts), and answers every request with the same KServe v2 JSON response.
 * What a Node.js server pays for HTTP when it parses the plain case itself.
 *
 *   node --import tsx bench/batching/constant-socket-server.ts [--port 8001] [--address 127.0.0.1]
 */
import { createServer } from 'node:net';

const BODY = Buffer.from('{"model_name":"constant","model_version":"1","outputs":[{"name":"OUTPUT","datatype":"FP32","shape":[1,10],"data":[0,1,2,3,4,5,6,7,8,9]}]}');
const REPLY = Buffer.concat([Buffer.from(`HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: ${BODY.byteLength}\r\n\r\n`), BODY]);
const CONTENT_LENGTH = /\r\ncontent-length: *([0-9]+)/i;

const argv = process.argv.slice(2);
const option = (name: string, fallback: string): string => (argv.includes(name) ? argv[argv.indexOf(name) + 1]! : fallback);
const server = createServer({ noDelay: true }, (socket) => {
  let unread: Buffer | undefined;
  socket.on('error', () => socket.destroy());
  socket.on('data', (chunk: Buffer) => {
    const bytes = unread === undefined ? chunk : Buffer.concat([unread, chunk]);
    let offset = 0;
    let answers = 0;
    for (;;) {
      const headEnd = bytes.indexOf('\r\n\r\n', offset);
      if (headEnd < 0) break;
      const length = Number(CONTENT_LENGTH.exec(bytes.toString('latin1', offset, headEnd))?.[1] ?? 0);
      if (headEnd + 4 + length > bytes.byteLength) break;
      offset = headEnd + 4 + length;
      answers++;
    }
    unread = offset < bytes.byteLength ? bytes.subarray(offset) : undefined;
    if (answers > 0) socket.write(answers === 1 ? REPLY : Buffer.concat(Array.from({ length: answers }, () => REPLY)));
  });
});
server.listen(Number(option('--port', '8001')), option('--address', '127.0.0.1'), () => {
  const address = server.address();
  console.log(`constant-socket-server listening on ${typeof address === 'object' && address !== null ? `${address.address}:${address.port}` : String(address)}`);
});
