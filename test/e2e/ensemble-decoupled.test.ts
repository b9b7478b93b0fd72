import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { after, before, describe, test } from 'node:test';
import { type Client, credentials } from '@grpc/grpc-js';
import { loadGrpcServices } from '../helpers/plain-grpc-clients.js';
import { EXAMPLES, type TestServer, startTestServer } from '../helpers/server.js';

// An ensemble with a decoupled step (Triton core ensemble_scheduler.cc): word_stream sends one response
// per word, each response feeds word_length, and the ensemble streams one response per word.
const STREAMS = fileURLToPath(new URL('../fixtures/stream_ensemble_repository', import.meta.url));
const { inference: InferenceClient } = loadGrpcServices();

type StreamReply = {
  error_message: string;
  infer_response: { model_name: string; outputs: Array<{ name: string }>; raw_output_contents: Buffer[]; parameters: Record<string, { bool_param?: boolean }> };
};

/** The elements of a raw BYTES tensor: each a 4-byte little-endian length, then its bytes. */
function bytesElements(raw: Buffer): string[] {
  const elements: string[] = [];
  for (let offset = 0; offset < raw.length; ) {
    const length = raw.readUInt32LE(offset);
    elements.push(raw.subarray(offset + 4, offset + 4 + length).toString('utf8'));
    offset += 4 + length;
  }
  return elements;
}

describe('an ensemble with a decoupled step', () => {
  let server: TestServer;
  let client: Client;
  before(async () => {
    server = await startTestServer({ modelRepositories: [EXAMPLES, STREAMS], modelControlMode: 'explicit', startupModels: ['word_lengths'] });
    client = new InferenceClient(server.grpcUrl!, credentials.createInsecure());
  });
  after(async () => {
    client.close();
    await server.close();
  });

  test('is decoupled itself: its config says so, and a plain infer call is refused', async () => {
    const config = (await (await server.get('/v2/models/word_lengths/config')).json()) as { model_transaction_policy?: { decoupled: boolean } };
    assert.deepEqual(config.model_transaction_policy, { decoupled: true });
    const refused = await server.post('/v2/models/word_lengths/infer', { inputs: [{ name: 'text_input', shape: [1], datatype: 'BYTES', data: ['a b'] }] });
    assert.equal(refused.status, 501);
    assert.match(
      ((await refused.json()) as { error: string }).error,
      /^HTTP end point doesn't support models with decoupled transaction policy \(model 'word_lengths' is decoupled/,
    );
  });

  test('generate_stream: one event per response of the decoupled step, each through the step after it', async () => {
    const response = await server.post('/v2/models/word_lengths/generate_stream', { text_input: 'the quick  brown fox' });
    assert.equal(response.status, 200);
    const events = (await response.text()).split('\n\n').filter((event) => event !== '').map((event) => JSON.parse(event.replace(/^data: /, '')) as object);
    assert.deepEqual(events, [
      { model_name: 'word_lengths', model_version: '1', WORD: 'the', LENGTH: 3 },
      { model_name: 'word_lengths', model_version: '1', WORD: 'quick', LENGTH: 5 },
      { model_name: 'word_lengths', model_version: '1', WORD: 'brown', LENGTH: 5 },
      { model_name: 'word_lengths', model_version: '1', WORD: 'fox', LENGTH: 3 },
    ]);
  });

  test('gRPC ModelStreamInfer: the responses, then the empty final one; two requests in flight keep their own words', async () => {
    const stream = (client as unknown as { ModelStreamInfer: () => NodeJS.ReadWriteStream & { write(m: object): void } }).ModelStreamInfer();
    const replies: StreamReply[] = [];
    const ended = new Promise<void>((resolve, reject) => {
      stream.on('data', (reply: StreamReply) => replies.push(reply));
      stream.on('end', resolve);
      stream.on('error', reject);
    });
    const text = (words: string): Buffer => {
      const bytes = Buffer.from(words);
      const length = Buffer.alloc(4);
      length.writeUInt32LE(bytes.length);
      return Buffer.concat([length, bytes]);
    };
    for (const [id, words] of [['a', 'one two three'], ['b', 'naïve']] as const) {
      stream.write({
        model_name: 'word_lengths',
        id,
        inputs: [{ name: 'text_input', datatype: 'BYTES', shape: [1] }],
        raw_input_contents: [text(words)],
        parameters: { triton_enable_empty_final_response: { bool_param: true } },
      });
    }
    stream.end();
    await ended;
    assert.ok(replies.every((reply) => reply.error_message === ''));
    const of = (id: string): Array<[string, number] | 'final'> =>
      replies
        .filter((reply) => (reply.infer_response as unknown as { id: string }).id === id)
        .map((reply) => {
          const { outputs, raw_output_contents: raw, parameters } = reply.infer_response;
          if (outputs.length === 0) return parameters.triton_final_response?.bool_param === true ? 'final' : ['?', -1];
          const word = bytesElements(raw[outputs.findIndex((output) => output.name === 'WORD')]!)[0]!;
          const length = raw[outputs.findIndex((output) => output.name === 'LENGTH')]!.readInt32LE(0);
          assert.equal(parameters.triton_final_response?.bool_param, false);
          return [word, length];
        });
    assert.deepEqual(of('a'), [['one', 3], ['two', 3], ['three', 5], 'final']);
    assert.deepEqual(of('b'), [['naïve', 6], 'final']);
  });
});
