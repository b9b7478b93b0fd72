/**
 * What the protobuf codec costs a 600 KB ModelInfer: the four conversions grpc-js makes per call
 * (the client encodes the request, the server decodes it, encodes its response, the client decodes
 * that), with the serializers src/protocol/grpc-service.ts gives grpc-js, beside plain `toBinary`.
 * (Until the commit that removed @grpc/proto-loader, this script measured it too: docs/benchmarks.md.)
 *
 *   npm run bench:grpc-codec      (BENCH_ROUNDS [9], BENCH_ITERATIONS [2000])
 *
 * The request carries one FP32 [1,153600] input in raw_input_contents (614,400 bytes) and the response
 * one output of the same size in raw_output_contents, with the fields tritonclient fills. Each round
 * times BENCH_ITERATIONS conversions back to back after a warm-up; the figure is the median round's
 * time per conversion.
 */
import { type DescMessage, type Message, create, toBinary } from '@bufbuild/protobuf';
import { ModelInferRequestSchema, ModelInferResponseSchema } from '../src/protocol/gen/grpc_service_pb.js';
import { inferenceService, serializeMessage } from '../src/protocol/grpc-service.js';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 9);
const ITERATIONS = Number(process.env.BENCH_ITERATIONS ?? 2000);
const TENSOR_BYTES = 153_600 * 4;

interface Codec {
  readonly name: string;
  encodeRequest(): Buffer;
  decodeRequest(wire: Buffer): unknown;
  encodeResponse(): Buffer;
  decodeResponse(wire: Buffer): unknown;
}

const tensor = Buffer.from(new Float32Array(TENSOR_BYTES / 4).map((_, i) => i / 7).buffer);

/** `serialize`: grpc-service.ts's serializer (one copy of the raw contents), or plain `toBinary`. */
function bufbuildCodec(name: string, serialize: (schema: DescMessage, message: Message) => Buffer): Codec {
  const request = create(ModelInferRequestSchema, {
    modelName: 'big',
    id: 'request-1',
    parameters: { priority: { parameterChoice: { case: 'uint64Param', value: 1n } } },
    inputs: [{ name: 'INPUT0', datatype: 'FP32', shape: [1n, 153_600n] }],
    outputs: [{ name: 'OUTPUT0' }],
    rawInputContents: [tensor],
  });
  const response = create(ModelInferResponseSchema, {
    modelName: 'big',
    modelVersion: '1',
    id: 'request-1',
    outputs: [{ name: 'OUTPUT0', datatype: 'FP32', shape: [1n, 153_600n] }],
    rawOutputContents: [tensor],
  });
  return {
    name,
    encodeRequest: () => serialize(ModelInferRequestSchema, request),
    decodeRequest: (wire) => inferenceService.modelInfer.requestDeserialize(wire),
    encodeResponse: () => serialize(ModelInferResponseSchema, response),
    decodeResponse: (wire) => inferenceService.modelInfer.responseDeserialize(wire),
  };
}

/** Times ITERATIONS calls of `run`: microseconds per call. */
function microsPerCall(run: () => unknown): number {
  const start = process.hrtime.bigint();
  for (let i = 0; i < ITERATIONS; i++) run();
  return Number(process.hrtime.bigint() - start) / 1000 / ITERATIONS;
}

const median = (values: number[]): number => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

const codecs = [
  bufbuildCodec('@bufbuild/protobuf 2.17, toBinary as it is', (schema, message) => {
    const bytes = toBinary(schema, message);
    return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  }),
  bufbuildCodec('@bufbuild/protobuf 2.17, serializeMessage (src/protocol/grpc-service.ts)', serializeMessage),
];
const operations = codecs.map((codec) => {
  const requestWire = codec.encodeRequest();
  const responseWire = codec.encodeResponse();
  return [() => codec.encodeRequest(), () => codec.decodeRequest(requestWire), () => codec.encodeResponse(), () => codec.decodeResponse(responseWire)];
});
// The codecs take turns within each round, so that the machine's load drifts over both alike.
const rounds = operations.map((runs) => runs.map((): number[] => []));
for (let round = -1; round < ROUNDS; round++) {
  operations.forEach((runs, codec) =>
    runs.forEach((run, operation) => {
      const micros = microsPerCall(run);
      if (round >= 0) rounds[codec]![operation]!.push(micros);
    }),
  );
}
console.log(`600 KB ModelInfer (${TENSOR_BYTES} tensor bytes), median of ${ROUNDS} rounds of ${ITERATIONS}, µs per conversion:\n`);
console.log('| codec | encode request | decode request | encode response | decode response |');
console.log('|---|---|---|---|---|');
codecs.forEach((codec, index) => console.log(`| ${codec.name} | ${rounds[index]!.map((values) => median(values).toFixed(1)).join(' | ')} |`));
