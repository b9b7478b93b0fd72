import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { after, before, describe, test } from 'node:test';
import { type Client, Metadata, credentials } from '@grpc/grpc-js';
import { DEFAULT_TRACE_SETTINGS } from '../../src/kernel/trace-settings.js';
import { loadGrpcServices } from '../helpers/plain-grpc-clients.js';
import { type OtlpReceiver, type ReceivedSpan, startOtlpReceiver } from '../helpers/otlp-receiver.js';
import { EXAMPLES, type TestServer, startTestServer } from '../helpers/server.js';

// The trace extension in OpenTelemetry mode (Triton's docs/user_guide/trace.md, src/tracer.cc): spans
// exported over OTLP/HTTP to a receiver the test runs, decoded with the OTLP protobuf definitions.
const EDGES = fileURLToPath(new URL('../fixtures/edges_repository', import.meta.url));
const { inference: InferenceClient } = loadGrpcServices();
const SERVER_KIND = 2;

const ones = Array.from({ length: 16 }, () => 1);
const int32Raw = (values: number[]): Buffer => Buffer.from(new Int32Array(values).buffer);
const traceparent = (): { traceId: string; parentId: string; header: string } => {
  const traceId = randomBytes(16).toString('hex');
  const parentId = randomBytes(8).toString('hex');
  return { traceId, parentId, header: `00-${traceId}-${parentId}-01` };
};
const eventNames = (span: ReceivedSpan): string[] => span.events.map((event) => event.name);

describe('the trace extension, OpenTelemetry mode', () => {
  let receiver: OtlpReceiver;
  let server: TestServer;
  let client: Client;
  let spans: readonly ReceivedSpan[];
  const http = traceparent();
  const grpc = traceparent();
  const sse = traceparent();
  const bls = traceparent();
  const pythonBls = traceparent();
  const grpcStream = traceparent();
  before(async () => {
    receiver = await startOtlpReceiver();
    // rate 0: only the requests that carry a traceparent are traced (Triton's context propagation).
    server = await startTestServer({
      modelRepositories: [EXAMPLES, EDGES],
      modelControlMode: 'explicit',
      startupModels: ['simple', 'text_length', 'length_pipeline', 'length_caller', 'length_caller_py', 'word_stream'],
      traceSettings: { ...DEFAULT_TRACE_SETTINGS, level: { timestamps: true, tensors: false }, rate: 0 },
      openTelemetry: { url: receiver.url, resource: { 'service.name': 'nereid-test', 'deployment.environment': 'ci' }, bspScheduleDelayMs: 50 },
    });
    client = new InferenceClient(server.grpcUrl!, credentials.createInsecure());
    const untraced = await server.post('/v2/models/length_pipeline/infer', { id: 'untraced', inputs: [{ name: 'TEXT', shape: [1, 1], datatype: 'BYTES', data: ['no'] }] });
    assert.equal(untraced.status, 200);
    const pipeline = await server.post(
      '/v2/models/length_pipeline/infer',
      { id: 'ensemble', inputs: [{ name: 'TEXT', shape: [1, 1], datatype: 'BYTES', data: ['four'] }] },
      { headers: { traceparent: http.header } },
    );
    assert.deepEqual(((await pipeline.json()) as { outputs: Array<{ data: number[] }> }).outputs[0]!.data, [4]);
    const metadata = new Metadata();
    metadata.set('traceparent', grpc.header);
    await new Promise<void>((resolve, reject) => {
      const request = {
        model_name: 'simple',
        id: 'over-grpc',
        inputs: [
          { name: 'INPUT0', datatype: 'INT32', shape: [1, 16] },
          { name: 'INPUT1', datatype: 'INT32', shape: [1, 16] },
        ],
        raw_input_contents: [int32Raw(ones), int32Raw(ones)],
      };
      (client as unknown as Record<string, (r: object, m: Metadata, c: (error: Error | null) => void) => void>).ModelInfer!(request, metadata, (error) =>
        error === null ? resolve() : reject(error),
      );
    });
    const calling = await server.post(
      '/v2/models/length_caller/infer',
      { id: 'caller', inputs: [{ name: 'TEXT', shape: [1], datatype: 'BYTES', data: ['seven'] }] },
      { headers: { traceparent: bls.header } },
    );
    assert.equal(calling.status, 200);
    const pythonCalling = await server.post(
      '/v2/models/length_caller_py/infer',
      { id: 'python-caller', inputs: [{ name: 'TEXT', shape: [1], datatype: 'BYTES', data: ['eleven'] }] },
      { headers: { traceparent: pythonBls.header } },
    );
    assert.equal(pythonCalling.status, 200);
    const stream = await server.post('/v2/models/word_stream/generate_stream', { text_input: 'a b' }, { headers: { traceparent: sse.header } });
    assert.equal((await stream.text()).split('data: ').length - 1, 2);
    const streamMetadata = new Metadata();
    streamMetadata.set('traceparent', grpcStream.header);
    const bidi = (client as unknown as { ModelStreamInfer: (m: Metadata) => NodeJS.ReadWriteStream & { write(m: object): void } }).ModelStreamInfer(streamMetadata);
    const streamEnded = new Promise<void>((resolve, reject) => {
      bidi.on('data', () => {});
      bidi.on('end', resolve);
      bidi.on('error', reject);
    });
    bidi.write({
      model_name: 'simple',
      id: 'in-a-stream',
      inputs: [
        { name: 'INPUT0', datatype: 'INT32', shape: [1, 16] },
        { name: 'INPUT1', datatype: 'INT32', shape: [1, 16] },
      ],
      raw_input_contents: [int32Raw(ones), int32Raw(ones)],
    });
    bidi.end();
    await streamEnded;
    // Sampled by the rate once it is 1: a trace of its own, with no remote parent.
    await server.post('/v2/trace/setting', { trace_rate: '1' });
    assert.equal((await server.post('/v2/models/simple/infer', { id: 'sampled', inputs: [
      { name: 'INPUT0', shape: [1, 16], datatype: 'INT32', data: ones },
      { name: 'INPUT1', shape: [1, 16], datatype: 'INT32', data: ones },
    ] })).status, 200);
    client.close();
    // Shutdown exports what the batch span processor still holds.
    await server.close();
    spans = receiver.spans;
  });
  after(async () => {
    await receiver.close();
  });

  test('an ensemble request over HTTP: InferRequest under the propagated parent, the ensemble span, its step with a compute span', () => {
    const trace = spans.filter((span) => span.traceId === http.traceId);
    assert.deepEqual(trace.map((span) => span.name).sort(), ['InferRequest', 'compute', 'length_pipeline', 'text_length']);
    const byName = (name: string): ReceivedSpan => trace.find((span) => span.name === name)!;
    const root = byName('InferRequest');
    const ensemble = byName('length_pipeline');
    const step = byName('text_length');
    const compute = byName('compute');
    assert.equal(root.parentSpanId, http.parentId, "the client's span is the parent of the request's top-level span");
    assert.equal(ensemble.parentSpanId, root.spanId);
    assert.equal(step.parentSpanId, ensemble.spanId, 'an ensemble step is a child of the ensemble');
    assert.equal(compute.parentSpanId, step.spanId);
    assert.deepEqual(trace.map((span) => span.kind), [SERVER_KIND, SERVER_KIND, SERVER_KIND, SERVER_KIND]);
    assert.deepEqual(eventNames(root), ['HTTP_RECV_START', 'HTTP_RECV_END', 'INFER_RESPONSE_COMPLETE', 'HTTP_SEND_START', 'HTTP_SEND_END']);
    assert.deepEqual(eventNames(ensemble), ['REQUEST_START', 'QUEUE_START', 'REQUEST_END']);
    assert.deepEqual(eventNames(step), ['REQUEST_START', 'QUEUE_START', 'INFER_RESPONSE_COMPLETE', 'REQUEST_END']);
    assert.deepEqual(eventNames(compute), ['COMPUTE_START', 'COMPUTE_INPUT_END', 'COMPUTE_OUTPUT_START', 'COMPUTE_END']);
    assert.deepEqual(ensemble.attributes, {
      'triton.model_name': 'length_pipeline',
      'triton.model_version': 1,
      'triton.trace_id': ensemble.attributes['triton.trace_id'],
      'triton.trace_parent_id': 0,
      'triton.request_id': 'ensemble',
    });
    assert.deepEqual(step.attributes, {
      'triton.model_name': 'text_length',
      'triton.model_version': 1,
      'triton.trace_id': step.attributes['triton.trace_id'],
      'triton.trace_parent_id': ensemble.attributes['triton.trace_id'],
      'triton.request_id': 'ensemble',
    });
    for (const span of trace) {
      assert.ok(span.startNs <= span.endNs, `${span.name} starts before it ends`);
      for (const event of span.events) assert.ok(span.startNs <= event.ns && event.ns <= span.endNs, `${span.name}: ${event.name} within the span`);
    }
    assert.ok(root.startNs <= ensemble.startNs && ensemble.endNs <= root.endNs);
    assert.ok(ensemble.startNs <= step.startNs && step.endNs <= ensemble.endNs);
    assert.deepEqual([root.resource['service.name'], root.resource['deployment.environment']], ['nereid-test', 'ci']);
  });

  test("a gRPC request's traceparent metadata is propagated; rate 0 traces nothing else until the rate is raised", () => {
    const trace = spans.filter((span) => span.traceId === grpc.traceId);
    assert.deepEqual(trace.map((span) => span.name).sort(), ['InferRequest', 'compute', 'simple']);
    const root = trace.find((span) => span.name === 'InferRequest')!;
    assert.equal(root.parentSpanId, grpc.parentId);
    assert.deepEqual(eventNames(root), ['GRPC_WAITREAD_START', 'GRPC_WAITREAD_END', 'INFER_RESPONSE_COMPLETE', 'GRPC_SEND_START', 'GRPC_SEND_END']);
    assert.deepEqual(trace.find((span) => span.name === 'simple')!.attributes['triton.request_id'], 'over-grpc');

    const requestIds = spans.flatMap((span) => (span.attributes['triton.request_id'] !== undefined ? [span.attributes['triton.request_id']] : []));
    assert.deepEqual(requestIds.filter((id) => id === 'untraced'), [], 'rate 0 samples no request without a traceparent');
    const sampled = spans.find((span) => span.attributes['triton.request_id'] === 'sampled')!;
    const root2 = spans.find((span) => span.spanId === sampled.parentSpanId)!;
    assert.equal(root2.name, 'InferRequest');
    assert.equal(root2.parentSpanId, '', 'a sampled request without a traceparent starts a trace of its own');
    assert.notEqual(root2.traceId, http.traceId);
  });

  test('generate_stream and gRPC ModelStreamInfer requests are traced too, under their traceparent', () => {
    const generate = spans.filter((span) => span.traceId === sse.traceId);
    assert.deepEqual(generate.map((span) => span.name).sort(), ['InferRequest', 'compute', 'word_stream']);
    const root = generate.find((span) => span.name === 'InferRequest')!;
    assert.equal(root.parentSpanId, sse.parentId);
    // The send starts with the first response, so later responses may complete after HTTP_SEND_START.
    const names = eventNames(root);
    assert.deepEqual([names.slice(0, 3), names.at(-1)], [['HTTP_RECV_START', 'HTTP_RECV_END', 'INFER_RESPONSE_COMPLETE'], 'HTTP_SEND_END']);
    assert.deepEqual([...names].sort(), ['HTTP_RECV_END', 'HTTP_RECV_START', 'HTTP_SEND_END', 'HTTP_SEND_START', 'INFER_RESPONSE_COMPLETE', 'INFER_RESPONSE_COMPLETE']);
    const streamed = spans.filter((span) => span.traceId === grpcStream.traceId);
    assert.deepEqual(streamed.map((span) => span.name).sort(), ['InferRequest', 'compute', 'simple']);
    assert.deepEqual(eventNames(streamed.find((span) => span.name === 'InferRequest')!), ['GRPC_WAITREAD_START', 'GRPC_WAITREAD_END', 'INFER_RESPONSE_COMPLETE', 'GRPC_SEND_START', 'GRPC_SEND_END']);
  });

  test("a JavaScript model's call to another model is a child of the calling request's model span", () => {
    const trace = spans.filter((span) => span.traceId === bls.traceId);
    assert.deepEqual(trace.map((span) => span.name).sort(), ['InferRequest', 'compute', 'compute', 'length_caller', 'text_length']);
    const caller = trace.find((span) => span.name === 'length_caller')!;
    const called = trace.find((span) => span.name === 'text_length')!;
    assert.equal(called.parentSpanId, caller.spanId);
    assert.equal(called.attributes['triton.trace_parent_id'], caller.attributes['triton.trace_id']);
    assert.deepEqual(trace.filter((span) => span.name === 'compute').map((span) => span.parentSpanId).sort(), [called.spanId, caller.spanId].sort());
  });

  test("a Python model's BLS call made with trace=request.trace() is a child of the calling request's model span", () => {
    const trace = spans.filter((span) => span.traceId === pythonBls.traceId);
    assert.deepEqual(trace.map((span) => span.name).sort(), ['InferRequest', 'compute', 'compute', 'length_caller_py', 'text_length']);
    const caller = trace.find((span) => span.name === 'length_caller_py')!;
    const called = trace.find((span) => span.name === 'text_length')!;
    assert.equal(caller.parentSpanId, trace.find((span) => span.name === 'InferRequest')!.spanId);
    assert.equal(called.parentSpanId, caller.spanId);
    assert.equal(called.attributes['triton.trace_parent_id'], caller.attributes['triton.trace_id']);
    assert.ok(caller.startNs <= called.startNs && called.endNs <= caller.endNs, 'the call lies within the calling request');
  });
});
