import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { type Client, credentials } from '@grpc/grpc-js';
import type { InferRequest, InferResponse } from '../../src/core/index.js';
import { NereidError } from '../../src/core/index.js';
import { loadGrpcServices } from '../helpers/plain-grpc-clients.js';
import { silentLogger } from '../../src/logging/logger.js';
import { type RunningServer, startServer } from '../../src/server.js';
import { successful } from '../helpers/stream-responses.js';
import { PYTHON_FIXTURES } from '../helpers/python-models.js';

const repeatRequest = (values: number[], id = ''): InferRequest => ({
  modelName: 'repeat',
  id,
  parameters: {},
  inputs: [
    { name: 'IN', dataType: 'INT32', shape: [values.length], data: new Int32Array(values) },
    { name: 'DELAY_MS', dataType: 'UINT32', shape: [1], data: new Uint32Array([5]) },
  ],
});

/** Each response's OUT and INDEX values, in the order they arrived. */
const valuesOf = (responses: readonly InferResponse[]): Array<[number, number]> =>
  responses.map((response) => {
    const out = response.outputs.find((output) => output.name === 'OUT')!.data as Int32Array;
    const index = response.outputs.find((output) => output.name === 'INDEX')!.data as Uint32Array;
    return [out[0]!, index[0]!];
  });

describe('Python backend: a decoupled model streams its responses', () => {
  let server: RunningServer;
  before(async () => {
    server = await startServer({
      modelRepositories: [PYTHON_FIXTURES],
      modelControlMode: 'explicit',
      startupModels: ['repeat'],
      httpPort: 0,
      httpAddress: '127.0.0.1',
      grpcPort: 0,
      grpcAddress: '127.0.0.1',
      isMetricsAllowed: false,
      logger: silentLogger,
    });
  });
  after(() => server.shutdown());

  test('each response the model sends from its thread arrives in order, then the request completes', async () => {
    const responses: InferResponse[] = [];
    await server.core.inferStream(repeatRequest([4, 5, 6], 'stream-1'), (response) => responses.push(successful(response)));
    assert.deepEqual(valuesOf(responses), [
      [4, 0],
      [5, 1],
      [6, 2],
    ]);
    assert.deepEqual(
      responses.map((response) => [response.modelName, response.id]),
      Array(3).fill(['repeat', 'stream-1']),
    );
  });

  test('a request may have no responses at all, only the final flag', async () => {
    const responses: InferResponse[] = [];
    await server.core.inferStream(repeatRequest([]), (response) => responses.push(successful(response)));
    assert.deepEqual(responses, []);
  });

  test('an error response ends the request with its error, after the responses before it', async () => {
    const responses: InferResponse[] = [];
    await assert.rejects(
      server.core.inferStream(repeatRequest([7, -1, 9]), (response) => responses.push(successful(response))),
      (error: unknown) => error instanceof NereidError && error.status === 'INVALID_ARG' && error.message === 'element 1 is negative (-1)',
    );
    assert.deepEqual(valuesOf(responses), [[7, 0]]);
  });

  test('an error response sent without the final flag fails itself alone: the responses after it still come and the request completes', async () => {
    const received: Array<[number, number] | string> = [];
    await server.core.inferStream({ ...repeatRequest([7, -1, 9]), parameters: { errors_go_on: true } }, (response) =>
      received.push(response instanceof NereidError ? `${response.status}: ${response.message}` : valuesOf([response])[0]!),
    );
    assert.deepEqual(received, [[7, 0], 'INVALID_ARG: element 1 is negative (-1)', [9, 2]]);
  });

  test("a decoupled model's execute that returns a list fails its requests in Triton's words", async () => {
    await assert.rejects(
      server.core.inferStream({ ...repeatRequest([1]), parameters: { returns_list: true } }, () => assert.fail('no response was expected')),
      (error: unknown) =>
        error instanceof NereidError &&
        error.message === "Failed to process the request(s) for model instance 'repeat_0', message: Python model 'repeat_0' is using the decoupled mode and the execute function must return None.",
    );
  });

  test('requests stream side by side, each with its own responses', async () => {
    const first: InferResponse[] = [];
    const second: InferResponse[] = [];
    await Promise.all([
      server.core.inferStream(repeatRequest([1, 2]), (response) => first.push(successful(response))),
      server.core.inferStream(repeatRequest([3, 4, 5]), (response) => second.push(successful(response))),
    ]);
    assert.deepEqual(valuesOf(first), [
      [1, 0],
      [2, 1],
    ]);
    assert.deepEqual(valuesOf(second), [
      [3, 0],
      [4, 1],
      [5, 2],
    ]);
  });

  test('gRPC ModelStreamInfer carries every response of a request', async () => {
    const { inference: InferenceClient } = loadGrpcServices();
    const client: Client = new InferenceClient(server.grpcUrl!, credentials.createInsecure());
    try {
      const stream = (client as unknown as { ModelStreamInfer: () => NodeJS.ReadWriteStream & { write(message: object): void } }).ModelStreamInfer();
      const replies: Array<{ error_message: string; infer_response: { id: string; raw_output_contents: Buffer[] } }> = [];
      const ended = new Promise<void>((resolve, reject) => {
        stream.on('data', (reply: (typeof replies)[number]) => replies.push(reply));
        stream.on('end', resolve);
        stream.on('error', reject);
      });
      stream.write({
        model_name: 'repeat',
        id: 'grpc-1',
        inputs: [{ name: 'IN', datatype: 'INT32', shape: ['3'] }],
        outputs: [{ name: 'OUT' }],
        raw_input_contents: [Buffer.from(new Int32Array([10, 20, 30]).buffer)],
      });
      stream.end();
      await ended;
      const values = replies
        .filter((reply) => reply.infer_response.raw_output_contents.length > 0)
        .map((reply) => Buffer.from(reply.infer_response.raw_output_contents[0]!).readInt32LE(0));
      assert.deepEqual(values, [10, 20, 30]);
      assert.ok(replies.every((reply) => reply.error_message === '' && reply.infer_response.id === 'grpc-1'));
    } finally {
      client.close();
    }
  });

  test("gRPC ModelInfer refuses the decoupled model in Triton's words, then why", async () => {
    const { inference: InferenceClient } = loadGrpcServices();
    const client: Client = new InferenceClient(server.grpcUrl!, credentials.createInsecure());
    try {
      const modelInfer = (client as unknown as { ModelInfer: (request: object, callback: (error: { code: number; details: string } | null) => void) => void }).ModelInfer.bind(client);
      const error = await new Promise<{ code: number; details: string } | null>((resolve) =>
        modelInfer({ model_name: 'repeat', inputs: [{ name: 'IN', datatype: 'INT32', shape: ['1'] }], raw_input_contents: [Buffer.from(new Int32Array([1]).buffer)] }, resolve),
      );
      assert.equal(error?.code, 12);
      assert.match(error!.details, /^ModelInfer RPC doesn't support models with decoupled transaction policy \(model 'repeat' is decoupled/);
    } finally {
      client.close();
    }
  });
});
