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

test("parameters of the wrong kind are refused in the texts of Triton's HTTP front end, the first one written first", () => {
  const INPUT = '{"name":"A","shape":[1],"datatype":"INT32","data":[1]}';
  const headerWith = (fields: string): string => `{"inputs":[${INPUT}],${fields}}`;
  const NON_UNSIGNED = 'attempt to access JSON non-unsigned-integer as unsigned-integer';
  const NON_BOOLEAN = 'attempt to access JSON non-boolean as boolean';
  const cases: Array<[string, string]> = [
    ['"parameters":{"priority":1.5}', `Unable to parse 'priority': ${NON_UNSIGNED}`],
    ['"parameters":{"priority":-1}', `Unable to parse 'priority': ${NON_UNSIGNED}`],
    ['"parameters":{"timeout":"5"}', `Unable to parse 'timeout': ${NON_UNSIGNED}`],
    ['"parameters":{"sequence_id":true}', "Unable to parse 'sequence_id': attempt to access JSON non-string as string"],
    ['"parameters":{"sequence_id":18446744073709551616}', "Unable to parse 'sequence_id': attempt to access JSON non-string as string"],
    ['"parameters":{"sequence_start":"yes"}', `Unable to parse 'sequence_start': ${NON_BOOLEAN}`],
    ['"parameters":{"sequence_end":1}', `Unable to parse 'sequence_end': ${NON_BOOLEAN}`],
    ['"parameters":{"binary_data_output":1}', `Unable to parse 'binary_data_output': ${NON_BOOLEAN}`],
    ['"parameters":{"custom":[1]}', "parameter 'custom' has invalid type. It should be either 'int', 'bool', or 'string'."],
    ['"parameters":{"custom":null}', "parameter 'custom' has invalid type. It should be either 'int', 'bool', or 'string'."],
    ['"parameters":{"timeout":-5,"priority":-1}', `Unable to parse 'timeout': ${NON_UNSIGNED}`],
    ['"parameters":[]', 'failed to get request params.: attempt to get members for non-object'],
    ['"id":7', "Unable to parse 'id': attempt to access JSON non-string as string"],
    ['"id":null', "Unable to parse 'id': attempt to access JSON non-string as string"],
    // The request's parameters are read before its inputs and outputs.
    ['"parameters":{"priority":"high"},"outputs":[{"name":"B","parameters":{"binary_data":"yes"}}]', `Unable to parse 'priority': ${NON_UNSIGNED}`],
    ['"outputs":[{"name":"B","parameters":{"binary_data":"yes"}}]', `Unable to parse 'binary_data': ${NON_BOOLEAN}`],
    ['"outputs":[{"name":"B","parameters":{"classification":-2}}]', `Unable to set 'classification': ${NON_UNSIGNED}`],
    ['"outputs":[{"name":"B","parameters":{"shared_memory_region":"r","binary_data":"no"}}]', `Unable to set 'binary_data': ${NON_BOOLEAN}`],
    ['"outputs":[{"name":"B","parameters":{"shared_memory_region":7}}]', "Unable to parse 'shared_memory_region': attempt to access JSON non-string as string"],
    ['"outputs":[{"name":"B","parameters":{"shared_memory_offset":-1}}]', `Unable to parse 'shared_memory_offset': ${NON_UNSIGNED}`],
    ['"outputs":[{"name":"B","parameters":{"shared_memory_region":"r","shared_memory_byte_size":"8"}}]', `Unable to parse 'shared_memory_byte_size': ${NON_UNSIGNED}`],
  ];
  for (const [fields, message] of cases) assert.throws(() => decodeRequestHeader(headerWith(fields)), { status: 'INVALID_ARG', message }, fields);
  assert.throws(() => decodeRequestHeader('{"inputs":[{"name":"A","shape":[1],"datatype":"INT32","parameters":{"binary_data_size":4.5}}]}'), {
    message: `Unable to parse 'binary_data_size': ${NON_UNSIGNED}`,
  });
  assert.throws(() => decodeRequestHeader(`{"inputs":[{"name":"A","shape":[1],"datatype":"INT32","data":[1],"parameters":{"shared_memory_byte_size":true}}]}`), {
    message: `Unable to parse 'shared_memory_byte_size': ${NON_UNSIGNED}`,
  });
});

test("parameters of the right kind pass; a tensor's parameters Triton does not read are no error, those of another kind left out", () => {
  const header = decodeRequestHeader(
    '{"id":"x","parameters":{"sequence_id":"s1","sequence_start":true,"priority":18446744073709551615,"timeout":0,"binary_data_output":true,"custom":0.5},' +
      '"inputs":[{"name":"A","shape":[1],"datatype":"INT32","parameters":{"binary_data_size":4,"shared_memory_offset":"ignored","tag":"t","list":[1]}}],' +
      '"outputs":[{"name":"B","parameters":{"classification":0,"note":{"a":1}}},{"name":"C","parameters":{"classification":3,"binary_data":false}},{"name":"D","parameters":7}]}',
  );
  assert.deepEqual(header.parameters, { sequence_id: 's1', sequence_start: true, priority: 18446744073709551615n, timeout: 0, custom: 0.5 });
  assert.equal(header.encoding.isBinaryByDefault, true);
  assert.deepEqual(header.inputs[0]!.parameters, { tag: 't' });
  // A classification of 0 asks for none, as in Triton.
  assert.deepEqual(header.outputs, [
    { name: 'B', parameters: {} },
    { name: 'C', parameters: { classification: 3 } },
    { name: 'D', parameters: {} },
  ]);
  assert.deepEqual([...header.encoding.isBinaryByOutput], [['C', false]]);
});
