/**
 * What the protobuf codec costs a 600 KB ModelInfer: the four conversions grpc-js makes per call
 * (the client encodes the request, the server decodes it, encodes its response, the client decodes
 * that), each with its message's serializer as given to grpc-js.
 *
 *   npm run bench:grpc-codec      (BENCH_ROUNDS [9], BENCH_ITERATIONS [2000])
 *
 * The request carries one FP32 [1,153600] input in raw_input_contents (614,400 bytes) and the response
 * one output of the same size in raw_output_contents, with the fields tritonclient fills. Each round
 * times BENCH_ITERATIONS conversions back to back after a warm-up; the figure is the median round's
 * time per conversion.
 */
import { fileURLToPath } from 'node:url';
import { loadSync } from '@grpc/proto-loader';
import { create, fromBinary, toBinary } from '@bufbuild/protobuf';
import { ModelInferRequestSchema, ModelInferResponseSchema } from '../src/protocol/gen/grpc_service_pb.js';

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

function protoLoaderCodec(): Codec {
  const definition = loadSync(['grpc_service.proto'], {
    includeDirs: [fileURLToPath(new URL('../src/protocol/proto', import.meta.url))],
    keepCase: true,
    longs: String,
    enums: String,
    defaults: true,
    oneofs: true,
  });
  const method = (definition['inference.GRPCInferenceService'] as Record<string, {
    requestSerialize(value: object): Buffer;
    requestDeserialize(wire: Buffer): unknown;
    responseSerialize(value: object): Buffer;
    responseDeserialize(wire: Buffer): unknown;
  }>).ModelInfer!;
  const request = {
    model_name: 'big',
    model_version: '',
    id: 'request-1',
    parameters: { priority: { uint64_param: '1' } },
    inputs: [{ name: 'INPUT0', datatype: 'FP32', shape: ['1', '153600'], parameters: {} }],
    outputs: [{ name: 'OUTPUT0', parameters: {} }],
    raw_input_contents: [tensor],
  };
  const response = {
    model_name: 'big',
    model_version: '1',
    id: 'request-1',
    parameters: {},
    outputs: [{ name: 'OUTPUT0', datatype: 'FP32', shape: ['1', '153600'] }],
    raw_output_contents: [tensor],
  };
  return {
    name: '@grpc/proto-loader 0.8 (protobufjs 7)',
    encodeRequest: () => method.requestSerialize(request),
    decodeRequest: (wire) => method.requestDeserialize(wire),
    encodeResponse: () => method.responseSerialize(response),
    decodeResponse: (wire) => method.responseDeserialize(wire),
  };
}

function bufbuildCodec(): Codec {
  const asBuffer = (bytes: Uint8Array): Buffer => Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
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
    name: '@bufbuild/protobuf 2.17 (generated types)',
    encodeRequest: () => asBuffer(toBinary(ModelInferRequestSchema, request)),
    decodeRequest: (wire) => fromBinary(ModelInferRequestSchema, wire),
    encodeResponse: () => asBuffer(toBinary(ModelInferResponseSchema, response)),
    decodeResponse: (wire) => fromBinary(ModelInferResponseSchema, wire),
  };
}

/** The median over ROUNDS of the time per call of `run`, in microseconds. */
function medianMicros(run: () => unknown): number {
  for (let i = 0; i < ITERATIONS / 4; i++) run();
  const rounds: number[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    const start = process.hrtime.bigint();
    for (let i = 0; i < ITERATIONS; i++) run();
    rounds.push(Number(process.hrtime.bigint() - start) / 1000 / ITERATIONS);
  }
  rounds.sort((a, b) => a - b);
  return rounds[Math.floor(rounds.length / 2)]!;
}

const rows: string[] = [];
for (const codec of [protoLoaderCodec(), bufbuildCodec()]) {
  const requestWire = codec.encodeRequest();
  const responseWire = codec.encodeResponse();
  const figures = [
    medianMicros(() => codec.encodeRequest()),
    medianMicros(() => codec.decodeRequest(requestWire)),
    medianMicros(() => codec.encodeResponse()),
    medianMicros(() => codec.decodeResponse(responseWire)),
  ];
  rows.push(`| ${codec.name} | ${figures.map((micros) => micros.toFixed(1)).join(' | ')} |`);
}
console.log(`600 KB ModelInfer (${TENSOR_BYTES} tensor bytes), median of ${ROUNDS} rounds of ${ITERATIONS}, µs per conversion:\n`);
console.log('| codec | encode request | decode request | encode response | decode response |');
console.log('|---|---|---|---|---|');
for (const row of rows) console.log(row);
