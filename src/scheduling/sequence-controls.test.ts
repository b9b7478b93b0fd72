import assert from 'node:assert/strict';
import { test } from 'node:test';
import { create } from '@bufbuild/protobuf';
import {
  DataType,
  ModelSequenceBatchingSchema,
  ModelSequenceBatching_ControlInputSchema,
  ModelSequenceBatching_ControlSchema,
  ModelSequenceBatching_Control_Kind as Kind,
} from '../protocol/gen/model_config_pb.js';
import type { InferRequest } from '../kernel/infer-request.js';
import { SequenceControls, correlationKeyOf, sequenceFlagsOf } from './sequence-controls.js';

const controlsOf = (entries: Array<[string, Kind, Record<string, unknown>]>, isBatching = true) =>
  new SequenceControls(
    create(ModelSequenceBatchingSchema, {
      controlInput: entries.map(([name, kind, extra]) =>
        create(ModelSequenceBatching_ControlInputSchema, { name, control: [create(ModelSequenceBatching_ControlSchema, { kind, ...extra })] }),
      ),
    }),
    isBatching,
  );

const view = (tensors: ReturnType<SequenceControls['tensorsFor']>) =>
  tensors.map((tensor) => `${tensor.name}:${tensor.dataType}[${tensor.shape.join(',')}]=${String((tensor.data as ArrayLike<unknown>)[0] instanceof Uint8Array ? new TextDecoder().decode((tensor.data as Uint8Array[])[0]) : (tensor.data as ArrayLike<unknown>)[0])}`);

test("each control carries its configured false or true value, in the list's type, one element per request", () => {
  const controls = controlsOf([
    ['S', Kind.CONTROL_SEQUENCE_START, { fp32FalseTrue: [0.5, 2.5] }],
    ['E', Kind.CONTROL_SEQUENCE_END, { boolFalseTrue: [false, true] }],
    ['R', Kind.CONTROL_SEQUENCE_READY, { int32FalseTrue: [7, 9] }],
    ['C', Kind.CONTROL_SEQUENCE_CORRID, { dataType: DataType.TYPE_UINT64 }],
  ]);
  assert.deepEqual(view(controls.tensorsFor({ isStart: true, isEnd: false, isReady: true, correlationId: 2n ** 64n - 1n })), [
    'S:FP32[1,1]=2.5',
    'E:BOOL[1,1]=0',
    'R:INT32[1,1]=9',
    'C:UINT64[1,1]=18446744073709551615',
  ]);
  assert.deepEqual(view(controls.tensorsFor({ isStart: false, isEnd: true, isReady: false, correlationId: undefined })), [
    'S:FP32[1,1]=0.5',
    'E:BOOL[1,1]=1',
    'R:INT32[1,1]=7',
    'C:UINT64[1,1]=0',
  ]);
});

test('CORRID: 32-bit types truncate as a C++ cast does; TYPE_STRING carries string and number ids; a string id for a numeric one is refused', () => {
  const signal = (correlationId: bigint | string) => ({ isStart: false, isEnd: false, isReady: true, correlationId });
  assert.deepEqual(view(controlsOf([['C', Kind.CONTROL_SEQUENCE_CORRID, { dataType: DataType.TYPE_INT32 }]], false).tensorsFor(signal(2n ** 32n + 5n))), ['C:INT32[1]=5']);
  assert.deepEqual(view(controlsOf([['C', Kind.CONTROL_SEQUENCE_CORRID, { dataType: DataType.TYPE_UINT32 }]]).tensorsFor(signal(2n ** 32n - 1n))), ['C:UINT32[1,1]=4294967295']);
  const text = controlsOf([['C', Kind.CONTROL_SEQUENCE_CORRID, { dataType: DataType.TYPE_STRING }]]);
  assert.deepEqual(view(text.tensorsFor(signal('user-1'))), ['C:BYTES[1,1]=user-1']);
  assert.deepEqual(view(text.tensorsFor(signal(42n))), ['C:BYTES[1,1]=42']);
  assert.equal(text.refusalOf('user-1', 'm'), undefined);
  assert.match(controlsOf([['C', Kind.CONTROL_SEQUENCE_CORRID, { dataType: DataType.TYPE_INT64 }]]).refusalOf('user-1', 'm')!, /gives a string correlation ID, but control input 'C' of kind CONTROL_SEQUENCE_CORRID has data type INT64/);
});

test('sequence_id 0 and "" are no sequence; uint64 1 and string "1" are different keys', () => {
  const request = (parameters: InferRequest['parameters']): InferRequest => ({ modelName: 'm', id: '', inputs: [], parameters });
  assert.equal(sequenceFlagsOf(request({ sequence_id: 0, sequence_start: true })).correlationId, undefined);
  assert.equal(sequenceFlagsOf(request({ sequence_id: '' })).correlationId, undefined);
  assert.deepEqual(sequenceFlagsOf(request({ sequence_id: 2n ** 63n, sequence_end: true })), { correlationId: 2n ** 63n, isStart: false, isEnd: true });
  assert.notEqual(correlationKeyOf(1n), correlationKeyOf('1'));
});
