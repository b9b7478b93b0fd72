import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { connect, constants as http2 } from 'node:http2';
import { fileURLToPath } from 'node:url';
import { after, before, describe, test } from 'node:test';
import { createGzip } from 'node:zlib';
import { EXAMPLES } from '../helpers/server.js';

/*
 * Requests built to cost the server far more memory than they cost the client: each is refused, and the
 * server's resident memory (VmRSS of the `nereid serve` child) comes back within 10 % of before.
 */

const MAIN = fileURLToPath(new URL('../../src/cli/main.ts', import.meta.url));
const COLLECT_GARBAGE = fileURLToPath(new URL('../helpers/collect-garbage-on-signal.js', import.meta.url));
const GIB = 2 ** 30;

/** The server's resident memory in bytes. */
function residentBytes(child: ChildProcess): number {
  const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${child.pid}/status`, 'utf8'));
  return Number(match![1]) * 1024;
}

/** A ModelInferRequest for 'simple' whose raw_input_contents (field 7) holds `zeroBytes` zeros, gzip-compressed as it is made. */
async function gzipBomb(zeroBytes: number): Promise<Buffer> {
  const gzip = createGzip({ level: 9 });
  const out: Buffer[] = [];
  gzip.on('data', (chunk: Buffer) => out.push(chunk));
  const done = new Promise((resolve) => gzip.once('end', resolve));
  const lengthVarint: number[] = [];
  for (let rest = zeroBytes; ; rest = Math.floor(rest / 128)) {
    if (rest < 128) {
      lengthVarint.push(rest);
      break;
    }
    lengthVarint.push((rest % 128) | 0x80);
  }
  gzip.write(Buffer.from([0x0a, 6, ...Buffer.from('simple'), 0x3a, ...lengthVarint]));
  const zeros = Buffer.alloc(16 * 2 ** 20);
  for (let written = 0; written < zeroBytes; written += zeros.byteLength) {
    if (!gzip.write(zeros.subarray(0, Math.min(zeros.byteLength, zeroBytes - written)))) await new Promise((resolve) => gzip.once('drain', resolve));
  }
  gzip.end();
  await done;
  return Buffer.concat(out);
}

/** The 5-byte gRPC message prefix: the compressed flag and the big-endian length. */
function messagePrefix(isCompressed: boolean, byteLength: number): Buffer {
  const prefix = Buffer.alloc(5);
  prefix.writeUInt8(isCompressed ? 1 : 0, 0);
  prefix.writeUInt32BE(byteLength, 1);
  return prefix;
}

/**
 * Sends one ModelInfer call from a raw HTTP/2 client: the prefix, then `body`'s bytes as flow control
 * allows, stopping when the server answers; resolves with the grpc-status and grpc-message it sent.
 */
async function rawModelInfer(
  address: string,
  options: { readonly encoding?: 'gzip'; readonly prefix: Buffer; readonly body: Buffer | { readonly zeroBytes: number } },
): Promise<{ status: number; message: string }> {
  const session = connect(`http://${address}`);
  session.on('error', () => {});
  try {
    const stream = session.request({
      [http2.HTTP2_HEADER_METHOD]: 'POST',
      [http2.HTTP2_HEADER_PATH]: '/inference.GRPCInferenceService/ModelInfer',
      [http2.HTTP2_HEADER_CONTENT_TYPE]: 'application/grpc',
      te: 'trailers',
      ...(options.encoding !== undefined ? { 'grpc-encoding': options.encoding } : {}),
    });
    stream.on('error', () => {});
    let answer: { status: number; message: string } | undefined;
    const answered = new Promise<{ status: number; message: string }>((resolve) => {
      const read = (headers: Record<string, unknown>): void => {
        if (headers['grpc-status'] === undefined) return;
        answer = { status: Number(headers['grpc-status']), message: decodeURIComponent(String(headers['grpc-message'] ?? '')) };
        resolve(answer);
      };
      stream.on('response', read);
      stream.on('trailers', read);
    });
    stream.resume();
    const write = async (chunk: Buffer): Promise<void> => {
      if (answer !== undefined || stream.destroyed) return;
      if (!stream.write(chunk)) await Promise.race([new Promise((resolve) => stream.once('drain', resolve)), answered]);
    };
    await write(options.prefix);
    if (Buffer.isBuffer(options.body)) {
      for (let offset = 0; offset < options.body.byteLength; offset += 2 ** 20) await write(options.body.subarray(offset, offset + 2 ** 20));
    } else {
      const zeros = Buffer.alloc(2 ** 20);
      for (let sent = 0; sent < options.body.zeroBytes && answer === undefined; sent += zeros.byteLength) await write(zeros);
    }
    if (answer === undefined && !stream.destroyed) stream.end();
    return await answered;
  } finally {
    session.destroy();
  }
}

/**
 * The resident memory once a full garbage collection has run and it stops falling. NOTE: an idle V8
 * collects nothing, so what a refused request allocated (bounded by the limit that refused it) stays
 * resident until the next collection; the collection shows whether anything still holds it, and whether
 * malloc gave the freed memory back (it kept zlib's 16 KiB pieces: protocol/content-encoding.ts).
 */
async function settledResidentBytes(child: ChildProcess): Promise<number> {
  child.kill('SIGUSR2');
  let last = residentBytes(child);
  for (let i = 0; i < 20; i++) {
    await new Promise((resolve) => setTimeout(resolve, 500));
    const now = residentBytes(child);
    if (now >= last - 2 ** 20) return now;
    last = now;
  }
  return last;
}

describe('requests that would cost the server gigabytes: refused, memory given back', () => {
  let child: ChildProcess;
  let httpUrl: string;
  let grpcAddress: string;
  before(async () => {
    child = spawn(
      process.execPath,
      [
        '--expose-gc',
        '--import',
        'tsx',
        '--import',
        COLLECT_GARBAGE,
        MAIN,
        'serve',
        '--model-repository',
        EXAMPLES,
        '--model-control-mode=explicit',
        '--load-model=simple',
        '--http-port=0',
        '--http-address=127.0.0.1',
        '--grpc-port=0',
        '--grpc-address=127.0.0.1',
        '--allow-metrics=false',
        '--grpc-max-message-size=268435456',
      ],
      { stdio: ['ignore', 'ignore', 'pipe'] },
    );
    let output = '';
    await new Promise<void>((resolve, reject) => {
      child.stderr!.on('data', (chunk: Buffer) => {
        output += chunk.toString();
        const http = /Started HTTPService at (127\.0\.0\.1:\d+)/.exec(output);
        const grpc = /Started GRPCInferenceService at (127\.0\.0\.1:\d+)/.exec(output);
        if (http !== null && grpc !== null) {
          httpUrl = `http://${http[1]}`;
          grpcAddress = grpc[1]!;
          resolve();
        }
      });
      child.once('exit', (code) => reject(new Error(`nereid exited with ${code}:\n${output}`)));
    });
    // Warm up both front ends so that what they allocate once is in the first reading.
    for (let i = 0; i < 20; i++) {
      await fetch(`${httpUrl}/v2/models/simple`);
      await rawModelInfer(grpcAddress, { prefix: messagePrefix(false, 0), body: Buffer.alloc(0) });
    }
  });
  after(() => child.kill('SIGKILL'));

  test('a 1 MB gzip bomb (1 GiB inflated) over gRPC: RESOURCE_EXHAUSTED at 64 MiB, memory back', async () => {
    const bomb = await gzipBomb(GIB);
    assert.ok(bomb.byteLength < 1.1 * 2 ** 20, `the bomb is ${bomb.byteLength} bytes`);
    const before = await settledResidentBytes(child);
    for (let i = 0; i < 3; i++) {
      const answer = await rawModelInfer(grpcAddress, { encoding: 'gzip', prefix: messagePrefix(true, bomb.byteLength), body: bomb });
      assert.deepEqual(answer, { status: 8, message: 'Received message that decompresses to a size larger than 67108864' });
    }
    const afterwards = await settledResidentBytes(child);
    assert.ok(afterwards < before * 1.1, `resident memory went from ${before} to ${afterwards} bytes`);
  });

  test('the same bomb as an HTTP gzip body: 400 at --http-max-input-size, memory back', async () => {
    const bomb = await gzipBomb(GIB);
    const before = await settledResidentBytes(child);
    for (let i = 0; i < 3; i++) {
      const response = await fetch(`${httpUrl}/v2/models/simple/infer`, {
        method: 'POST',
        body: bomb,
        headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' },
      });
      assert.equal(response.status, 400);
      assert.deepEqual(await response.json(), {
        error: 'Request JSON size of more than 67108864 bytes once decompressed exceeds the maximum allowed value of 67108864 bytes. Use --http-max-input-size to increase the limit.',
      });
    }
    const afterwards = await settledResidentBytes(child);
    assert.ok(afterwards < before * 1.1, `resident memory went from ${before} to ${afterwards} bytes`);
  });

  test('a 1 GiB gRPC message past --grpc-max-message-size: RESOURCE_EXHAUSTED from its length prefix, memory back', async () => {
    const before = await settledResidentBytes(child);
    const answer = await rawModelInfer(grpcAddress, { prefix: messagePrefix(false, GIB), body: { zeroBytes: GIB } });
    assert.deepEqual(answer, { status: 8, message: `Received message larger than max (${GIB} vs 268435456)` });
    const afterwards = await settledResidentBytes(child);
    assert.ok(afterwards < before * 1.1, `resident memory went from ${before} to ${afterwards} bytes`);
    assert.equal((await fetch(`${httpUrl}/v2/models/simple/ready`)).status, 200);
  });
});
