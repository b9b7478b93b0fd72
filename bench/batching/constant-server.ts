/**
 * The floor of a node:http server on this machine, a baseline of bench/http-floor.ts: it reads each
 * request's body and answers every request, whatever its path, with the same small KServe v2 JSON
 * response, computing nothing. What any Node.js server that speaks HTTP through node:http pays at least.
 *
 *   node --import tsx bench/batching/constant-server.ts [--port 8001] [--address 127.0.0.1]
 */
import { createServer } from 'node:http';

const RESPONSE = Buffer.from('{"model_name":"constant","model_version":"1","outputs":[{"name":"OUTPUT","datatype":"FP32","shape":[1,10],"data":[0,1,2,3,4,5,6,7,8,9]}]}');
const HEADERS = { 'content-type': 'application/json', 'content-length': String(RESPONSE.byteLength) };

const argv = process.argv.slice(2);
const option = (name: string, fallback: string): string => (argv.includes(name) ? argv[argv.indexOf(name) + 1]! : fallback);
const server = createServer((req, res) => {
  req.on('data', () => {});
  req.on('end', () => res.writeHead(200, HEADERS).end(RESPONSE));
});
server.listen(Number(option('--port', '8001')), option('--address', '127.0.0.1'), () => {
  const address = server.address();
  console.log(`constant-server listening on ${typeof address === 'object' && address !== null ? `${address.address}:${address.port}` : String(address)}`);
});
