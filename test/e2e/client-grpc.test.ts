import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { AbortError, GrpcClient, type StreamResponse } from '../../src/client/index.js';
import { describeClientConformance, simpleInputs, slowInputs } from '../helpers/client-conformance.js';
import { EXAMPLES, FIXTURES, type TestServer, startTestServer } from '../helpers/server.js';

describe('GrpcClient against the real server', () => {
  describeClientConformance({ protocol: 'grpc', connect: (server, address) => new GrpcClient(address ?? server.grpcUrl!) });

  describe('grpc: ModelStreamInfer through stream()', () => {
    let server: TestServer;
    let client: GrpcClient;
    before(async () => {
      server = await startTestServer({ modelRepositories: [EXAMPLES, FIXTURES], isStrictReadiness: false });
      client = new GrpcClient(server.grpcUrl!);
    });
    after(async () => {
      await client.close();
      await server.close();
    });

    test('responses come back as an async iterable; a failed request is a response with its error', async () => {
      const stream = client.stream();
      const ids = [
        stream.send('simple', simpleInputs()),
        stream.send('simple', simpleInputs([1, 15])),
        stream.send('identity_bytes', [{ name: 'INPUT0', datatype: 'BYTES', shape: [1, 2], data: ['a', 'bc'] }], { id: 'mine' }),
      ];
      assert.deepEqual(ids, ['stream-1', 'stream-2', 'mine']);
      stream.end();
      const responses = new Map<string, StreamResponse>();
      for await (const response of stream) responses.set(response.id, response);
      assert.equal(responses.size, 3);
      assert.deepEqual(responses.get('stream-1')!.result!.data('OUTPUT0', 'INT32'), Int32Array.from({ length: 16 }, (_, i) => i + 1));
      const failed = responses.get('stream-2')!;
      assert.equal(failed.result, undefined);
      assert.equal(failed.error!.name, 'ServerError');
      // Both inputs are wrong: Triton names the second sent (src/kernel/triton-input-order.ts).
      assert.equal(failed.error!.message, "unexpected shape for input 'INPUT1' for model 'simple'. Expected [-1,16], got [1,15]. NOTE: Setting a non-zero max_batch_size in the model config requires a batch dimension to be prepended to each input shape. If you want to specify the full shape including the batch dim in your input dims config, try setting max_batch_size to zero. See the model configuration docs for more info on max_batch_size.");
      assert.deepEqual(responses.get('mine')!.result!.strings('OUTPUT0'), ['a', 'bc']);
    });

    test('many requests in flight on one stream', async () => {
      const stream = client.stream();
      const sent = Array.from({ length: 50 }, () => stream.send('simple', simpleInputs()));
      stream.end();
      const received: string[] = [];
      for await (const response of stream) {
        assert.equal(response.error, undefined);
        received.push(response.id);
      }
      assert.deepEqual(received.sort(), sent.sort());
    });

    test('an AbortSignal cancels the stream: the iteration ends with an AbortError', async () => {
      const controller = new AbortController();
      const stream = client.stream({ signal: controller.signal });
      stream.send('slow', slowInputs);
      setTimeout(() => controller.abort('enough'), 10);
      await assert.rejects(
        (async () => {
          for await (const _response of stream) assert.fail('no response expected');
        })(),
        (error: unknown) => error instanceof AbortError && error.message === 'the stream was aborted: enough',
      );
      assert.throws(() => stream.send('simple', simpleInputs()), { message: 'cannot send on a stream that was ended, cancelled or has failed' });
    });

    test('a stream timeout ends the iteration with a TimeoutError', async () => {
      const stream = client.stream({ timeoutMs: 1 });
      stream.send('slow', slowInputs);
      await assert.rejects(
        (async () => {
          for await (const _response of stream);
        })(),
        { name: 'TimeoutError', message: 'the stream timed out after 1 ms' },
      );
    });

    test('leaving the loop early cancels the stream', async () => {
      const stream = client.stream();
      for (let i = 0; i < 5; i++) stream.send('simple', simpleInputs());
      let count = 0;
      for await (const _response of stream) {
        count++;
        break;
      }
      assert.equal(count, 1);
      await stream.whenFinished;
      assert.equal(await client.isServerLive(), true);
    });
  });
});
