import assert from 'node:assert/strict';
import { test } from 'node:test';
import { responseParametersOf, withResponseParameters } from '../kernel/response-parameters.js';
import type { Tensor } from '../kernel/tensor.js';
import { decodeEntry, describeRedisFailure, encodeEntry, withEnvironmentCredentials } from './redis-cache.js';

test('an entry keeps each output: name, type, shape and data, BYTES and 64-bit integers included', () => {
  const outputs: Tensor[] = [
    { name: 'F', dataType: 'FP32', shape: [1, 2], data: new Float32Array([1.5, -2]) },
    { name: 'S', dataType: 'BYTES', shape: [2], data: [new TextEncoder().encode('a b'), new Uint8Array(0)] },
    { name: 'I', dataType: 'INT64', shape: [1], data: new BigInt64Array([-(2n ** 62n)]) },
  ];
  const decoded = decodeEntry(encodeEntry(outputs))!;
  assert.deepEqual(
    decoded.map((output) => [output.name, output.dataType, output.shape]),
    [
      ['F', 'FP32', [1, 2]],
      ['S', 'BYTES', [2]],
      ['I', 'INT64', [1]],
    ],
  );
  assert.deepEqual([...(decoded[0]!.data as Float32Array)], [1.5, -2]);
  assert.deepEqual((decoded[1]!.data as Uint8Array[]).map((element) => Buffer.from(element).toString()), ['a b', '']);
  assert.deepEqual([...(decoded[2]!.data as BigInt64Array)], [-(2n ** 62n)]);
});

test("a value that is not an entry (another program's key, a cut-off value) is a miss", () => {
  const entry = encodeEntry([{ name: 'F', dataType: 'FP32', shape: [1], data: new Float32Array([1]) }]);
  assert.equal(decodeEntry(Buffer.from('hello world')), undefined);
  assert.equal(decodeEntry(entry.subarray(0, entry.byteLength - 1)), undefined);
  assert.equal(decodeEntry(Buffer.alloc(0)), undefined);
});

test('an entry keeps the response parameters the model set, of every type; an entry of the earlier form (a bare list) has none', () => {
  const parameters = { sequence_note: 'last', score: 0.5, total: 2n ** 60n, is_final: true };
  const decoded = decodeEntry(encodeEntry(withResponseParameters([{ name: 'F', dataType: 'FP32', shape: [1], data: new Float32Array([1]) }], parameters)))!;
  assert.deepEqual(responseParametersOf(decoded), parameters);
  assert.deepEqual([...(decoded[0]!.data as Float32Array)], [1]);
  const header = Buffer.from(JSON.stringify([{ name: 'F', dataType: 'FP32', shape: [1], byteLength: 4 }]));
  const length = Buffer.alloc(4);
  length.writeUInt32LE(header.byteLength);
  const earlier = decodeEntry(Buffer.concat([length, header, Buffer.from(new Float32Array([3]).buffer)]))!;
  assert.deepEqual([...(earlier[0]!.data as Float32Array)], [3]);
  assert.deepEqual(responseParametersOf(earlier), {});
});

test('TRITONCACHE_REDIS_USERNAME and TRITONCACHE_REDIS_PASSWORD fill in the user and password the flags leave out', () => {
  const env = { TRITONCACHE_REDIS_USERNAME: 'env-user', TRITONCACHE_REDIS_PASSWORD: 'env-pw' };
  assert.deepEqual(withEnvironmentCredentials({ host: 'h', port: 1 }, env), { host: 'h', port: 1, user: 'env-user', password: 'env-pw' });
  assert.deepEqual(withEnvironmentCredentials({ host: 'h', port: 1, user: 'u', password: 'p' }, env), { host: 'h', port: 1, user: 'u', password: 'p' });
  assert.deepEqual(withEnvironmentCredentials({ host: 'h', port: 1 }, {}), { host: 'h', port: 1 });
});

test("a failure in the words of Triton's redis client: the system's for a socket error, Redis's reply otherwise", () => {
  const socketError = (code: string): Error => Object.assign(new Error(`connect ${code}`), { code });
  assert.deepEqual(
    [socketError('ECONNREFUSED'), socketError('ENOTFOUND'), socketError('EAI_AGAIN'), socketError('EPIPE'), new Error('NOAUTH Authentication required.')].map((error) =>
      describeRedisFailure(error, 'localhost:0'),
    ),
    [
      'failed to connect to Redis (localhost:0): Connection refused',
      'failed to connect to Redis (localhost:0): Name or service not known',
      'failed to connect to Redis (localhost:0): Temporary failure in name resolution',
      'failed to connect to Redis (localhost:0): connect EPIPE',
      'NOAUTH Authentication required.',
    ],
  );
});
