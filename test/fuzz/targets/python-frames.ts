import assert from 'node:assert/strict';
import fc from 'fast-check';
import { FRAME_HEADER_BYTES, FrameReader, FrameSplitter, FrameWriter } from '../../../src/backends/python/frame-codec.js';
import { type StubRequest, type StubResponse, readRequest, readResponse, writeRequest, writeResponse } from '../../../src/backends/python/stub-protocol.js';
import { NereidError } from '../../../src/kernel/errors.js';
import type { Tensor } from '../../../src/kernel/tensor.js';
import { comparableData, parameterKey, parameterValue, tensors } from '../arbitraries.js';
import { type FuzzTarget, expectClientError } from '../fuzz-target.js';

const PARSER = 'Python backend frames (frame-codec.ts, stub-protocol.ts)';

/** The frames a splitter finds in `stream` pushed as the chunks that `cuts` mark. */
function splitFrames(stream: Uint8Array, cuts: readonly number[]): Array<[number, string]> {
  const frames: Array<[number, string]> = [];
  const splitter = new FrameSplitter((kind, body) => frames.push([kind, Buffer.from(body).toString('hex')]));
  const points = [...new Set(cuts.map((cut) => cut % (stream.byteLength + 1)))].sort((a, b) => a - b);
  let start = 0;
  for (const point of [...points, stream.byteLength]) {
    splitter.push(Buffer.from(stream.subarray(start, point)));
    start = point;
  }
  return frames;
}

/** A stream of frames, some with a body length that runs past the end. */
const frameStream = fc
  .array(fc.tuple(fc.integer({ min: 0, max: 255 }), fc.uint8Array({ maxLength: 40 })), { maxLength: 5 })
  .chain((frames) =>
    fc.tuple(fc.constant(frames), fc.uint8Array({ maxLength: 12 })).map(([parts, tail]) =>
      Buffer.concat([
        ...parts.map(([kind, body]) => {
          const header = Buffer.alloc(FRAME_HEADER_BYTES);
          header.writeUInt32LE(body.byteLength, 0);
          header[4] = kind;
          return Buffer.concat([header, body]);
        }),
        tail,
      ]),
    ),
  );

const tensorsWithoutUtf8 = tensors({ isUtf8: false });

const stubRequest: fc.Arbitrary<StubRequest> = fc.record({
  id: fc.string({ unit: 'grapheme', maxLength: 8 }),
  correlationId: parameterValue,
  flags: fc.integer({ min: 0, max: 3 }),
  parameters: fc.dictionary(parameterKey, parameterValue, { maxKeys: 3 }).map((entries) => ({ ...entries })),
  requestedOutputs: fc.array(fc.string({ unit: 'grapheme', maxLength: 6 }), { maxLength: 3 }),
  inputs: tensorsWithoutUtf8.map((generated) => generated.map(({ name, datatype, shape, data }): Tensor => ({ name, dataType: datatype, shape, data }))),
});

const comparableTensors = (list: readonly Tensor[]) => list.map((t) => [t.name, t.dataType, t.shape, comparableData(t.data)]);

/** A frame body read as each message the stub sends may be: the message, or INTERNAL ("malformed message from the Python stub"). */
function readEveryWay(body: Uint8Array): void {
  for (const read of [readRequest, readResponse]) {
    expectClientError(() => read(new FrameReader(body)), ['INTERNAL']);
  }
}

export const pythonFrameTargets: readonly FuzzTarget[] = [
  {
    parser: PARSER,
    name: 'a stream cut into chunks anywhere yields the same frames as in one chunk',
    property: () =>
      fc.property(frameStream, fc.array(fc.nat(), { maxLength: 6 }), (stream, cuts) => {
        assert.deepEqual(splitFrames(stream, cuts), splitFrames(stream, []));
      }),
  },
  {
    parser: PARSER,
    name: 'arbitrary frame bodies read as a request or a response: the message, or INTERNAL',
    property: () => fc.property(fc.uint8Array({ maxLength: 96 }), fc.nat({ max: 7 }), (bytes, offset) => readEveryWay(Buffer.concat([Buffer.alloc(offset), bytes]).subarray(offset))),
  },
  {
    parser: PARSER,
    name: 'valid request bodies with bytes changed or cut: the message, or INTERNAL',
    property: () =>
      fc.property(stubRequest, fc.nat(), fc.nat(), fc.integer({ min: 0, max: 255 }), (request, cut, at, value) => {
        const writer = new FrameWriter();
        writeRequest(writer, request);
        const body = Buffer.concat(writer.finish(2)).subarray(FRAME_HEADER_BYTES);
        if (body.byteLength > 0) body[at % body.byteLength] = value;
        readEveryWay(body.subarray(0, cut % (body.byteLength + 1)));
      }),
  },
  {
    parser: PARSER,
    name: 'round trip: requests and responses read back as written, however the stream is cut',
    property: () =>
      fc.property(stubRequest, fc.oneof(tensorsWithoutUtf8, fc.constant(undefined)), fc.array(fc.nat(), { maxLength: 4 }), (request, outputs, cuts) => {
        const response: StubResponse =
          outputs === undefined
            ? { error: new NereidError('INVALID_ARG', 'bad') }
            : { outputs: outputs.map(({ name, datatype, shape, data }) => ({ name, dataType: datatype, shape, data })), parameters: {} };
        const requestWriter = new FrameWriter();
        writeRequest(requestWriter, request);
        const responseWriter = new FrameWriter();
        writeResponse(responseWriter, response);
        const stream = Buffer.concat([...requestWriter.finish(2), ...responseWriter.finish(19)]);
        const bodies: Uint8Array[] = [];
        const splitter = new FrameSplitter((_kind, body) => bodies.push(Buffer.from(body)));
        let start = 0;
        for (const point of [...cuts.map((cut) => cut % (stream.byteLength + 1)).sort((a, b) => a - b), stream.byteLength]) {
          splitter.push(stream.subarray(start, point));
          start = point;
        }
        assert.equal(bodies.length, 2);
        const read = readRequest(new FrameReader(bodies[0]!));
        assert.deepEqual(
          [read.id, read.correlationId, read.flags, read.parameters, read.requestedOutputs, comparableTensors(read.inputs)],
          [request.id, request.correlationId, request.flags, request.parameters, request.requestedOutputs, comparableTensors(request.inputs)],
        );
        const readBack = readResponse(new FrameReader(bodies[1]!));
        if ('error' in response) assert.deepEqual('error' in readBack && [readBack.error.status, readBack.error.message], ['INVALID_ARG', 'bad']);
        else assert.deepEqual('outputs' in readBack && comparableTensors(readBack.outputs), comparableTensors(response.outputs));
      }),
  },
];
