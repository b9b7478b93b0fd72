import assert from 'node:assert/strict';
import { test } from 'node:test';
import { NereidError } from '../../core/index.js';
import { decodeRequestHeader, requestHeaderOf } from './request-header.js';

const BINARY = '{"id":"7","inputs":[{"name":"INPUT0","shape":[1,16],"datatype":"FP32","parameters":{"binary_data_size":64}}],"parameters":{"binary_data_output":true,"priority":2}}';

test('the same header text gives the same frozen header; another text its own', () => {
  const first = requestHeaderOf(BINARY);
  assert.equal(requestHeaderOf(`${BINARY}`), first);
  assert.ok(Object.isFrozen(first) && Object.isFrozen(first.inputs[0]!.shape) && Object.isFrozen(first.parameters));
  assert.throws(() => (first.inputs[0]!.shape as number[]).push(2), TypeError);
  assert.notEqual(requestHeaderOf('{"inputs":[]}'), first);
  for (let i = 0; i < 200; i++) assert.equal(requestHeaderOf(`{"id":"${i}","inputs":[]}`).id, String(i));
});

test('the consumed parameters are left out, the others kept, and the encoding read', () => {
  const header = decodeRequestHeader(BINARY);
  assert.deepEqual(header.parameters, { priority: 2 });
  assert.deepEqual(header.inputs[0]!.parameters, {});
  assert.equal(header.inputs[0]!.binarySize, 64);
  assert.equal(header.encoding.isBinaryByDefault, true);
  assert.equal(header.isDecodableNow, true);
  assert.equal(header.outputs, undefined);
});

test('JSON data and fixed-size binary data decode in one step; BYTES binary data and shared memory do not', () => {
  assert.equal(decodeRequestHeader('{"inputs":[{"name":"A","shape":[2],"datatype":"INT32","data":[1,2]}]}').isDecodableNow, true);
  assert.equal(decodeRequestHeader('{"inputs":[{"name":"A","shape":[1],"datatype":"BYTES","data":["ab"]}]}').isDecodableNow, true);
  assert.equal(decodeRequestHeader('{"inputs":[{"name":"A","shape":[1],"datatype":"BYTES","parameters":{"binary_data_size":5}}]}').isDecodableNow, false);
  const shmInput = decodeRequestHeader(
    '{"inputs":[{"name":"A","shape":[2],"datatype":"INT32","parameters":{"shared_memory_region":"r","shared_memory_byte_size":8}}]}',
  );
  assert.equal(shmInput.isDecodableNow, false);
  const shm = decodeRequestHeader(
    '{"inputs":[{"name":"A","shape":[2],"datatype":"INT32","parameters":{"binary_data_size":8}}],"outputs":[{"name":"B","parameters":{"shared_memory_region":"r","shared_memory_byte_size":8}}]}',
  );
  assert.equal(shm.isDecodableNow, false);
  assert.deepEqual(shm.outputRegions, [['B', { region: 'r', offset: 0, byteSize: 8 }]]);
  assert.deepEqual(shm.outputs, [{ name: 'B', parameters: {} }]);
});

test('a header that fails is refused every time, with the same message', () => {
  for (let i = 0; i < 2; i++) {
    assert.throws(() => requestHeaderOf('{"inputs":'), (error) => error instanceof NereidError && error.status === 'INVALID_ARG');
    assert.throws(
      () => requestHeaderOf('{"inputs":[{"name":"A","shape":[2],"datatype":"INT32","data":[1,2],"parameters":{"binary_data_size":8}}]}'),
      { message: "Input must set only one of the following fields: 'data', 'binary_data_size' in 'parameters', 'shared_memory_region' in 'parameters'. But set 'data' 'binary_data_size'" },
    );
    assert.throws(() => requestHeaderOf('{"inputs":[{"name":"A","shape":[2],"datatype":"INT32"}]}'), {
      message: "Input must set only one of the following fields: 'data', 'binary_data_size' in 'parameters', 'shared_memory_region' in 'parameters'. But no field is set",
    });
  }
});
