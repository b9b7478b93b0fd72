import assert from 'node:assert/strict';
import { test } from 'node:test';
import { DATA_TYPE_NAMES, dataTypeFromConfig, dataTypeToConfig, isDataType } from './data-type.js';

test('the data types, in the order of the messages that list them, with their config names', () => {
  assert.equal(DATA_TYPE_NAMES.join(', '), 'BOOL, UINT8, UINT16, UINT32, UINT64, INT8, INT16, INT32, INT64, FP16, FP32, FP64, BYTES, BF16');
  assert.deepEqual(DATA_TYPE_NAMES.map((dataType) => dataTypeFromConfig(dataTypeToConfig(dataType))), DATA_TYPE_NAMES);
  assert.equal(dataTypeToConfig('BYTES'), 'TYPE_STRING');
  assert.equal(isDataType('FP8'), false);
});
