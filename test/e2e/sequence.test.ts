import assert from 'node:assert/strict';
import { cp, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, test } from 'node:test';
import { GrpcClient, HttpClient, type InferenceClient, ServerError, type StreamResponse } from '../../src/client/index.js';
import { PYTHON_FIXTURES } from '../helpers/python-models.js';
import { EXAMPLES, type TestServer, startTestServer } from '../helpers/server.js';

/**
 * The sequence batcher end to end: many sequences interleaved by concurrent clients over HTTP and
 * gRPC (streams), each answer checked against the running sum of its own sequence, so a state that
 * leaked between sequences, or a request run out of order, shows as a wrong number.
 */

const OLDEST = `sequence_batching {
  max_sequence_idle_microseconds: 5000000
  oldest { max_candidate_sequences: 8 max_queue_delay_microseconds: 200 }
  control_input [
    { name: "START" control [ { kind: CONTROL_SEQUENCE_START int32_false_true: [ 0, 1 ] } ] },
    { name: "READY" control [ { kind: CONTROL_SEQUENCE_READY int32_false_true: [ 0, 1 ] } ] }
  ]
  state [ { input_name: "ACC_IN" output_name: "ACC_OUT" data_type: TYPE_INT32 dims: [ 1 ] } ]
}
instance_group [ { kind: KIND_CPU count: 2 } ]
`;

/** The examples' accumulator and running_mean, the accumulator with the oldest strategy and with a short idle time, and the Python model. */
async function makeRepository(): Promise<string> {
  const root = await mkdtemp(join(tmpdir(), 'nereid-sequence-'));
  for (const model of ['accumulator', 'running_mean']) await cp(join(EXAMPLES, model), join(root, model), { recursive: true });
  await cp(join(PYTHON_FIXTURES, 'sequence_sum'), join(root, 'sequence_sum'), { recursive: true });
  const accumulator = await readFile(join(EXAMPLES, 'accumulator', 'config.pbtxt'), 'utf8');
  const [head] = accumulator.split('sequence_batching {');
  const variants: Record<string, string> = {
    accumulator_oldest: `${head!}${OLDEST}`,
    accumulator_idle: accumulator.replace('max_sequence_idle_microseconds: 5000000', 'max_sequence_idle_microseconds: 200000'),
  };
  for (const [name, text] of Object.entries(variants)) {
    await cp(join(EXAMPLES, 'accumulator'), join(root, name), { recursive: true });
    await writeFile(join(root, name, 'config.pbtxt'), text.replace('name: "accumulator"', `name: "${name}"`));
  }
  await mkdir(join(root, 'accumulator_ensemble', '1'), { recursive: true });
  await writeFile(join(root, 'accumulator_ensemble', 'config.pbtxt'), ENSEMBLE);
  return root;
}

/** An ensemble whose one step is the stateful accumulator: the step gets the ensemble request's sequence id and flags. */
const ENSEMBLE = `platform: "ensemble"
max_batch_size: 8
input [ { name: "X" data_type: TYPE_INT32 dims: [ 1 ] } ]
output [ { name: "Y" data_type: TYPE_INT32 dims: [ 1 ] } ]
ensemble_scheduling {
  step [ { model_name: "accumulator" model_version: -1 input_map { key: "INPUT" value: "X" } output_map { key: "OUTPUT" value: "Y" } } ]
}
`;

const input = (value: number) => [{ name: 'INPUT', datatype: 'INT32' as const, shape: [1, 1], data: [value] }];

/** Values of sequence `s` at step `i`: distinct per sequence, so a mixed-up state gives a wrong sum. */
const valueOf = (s: number, i: number): number => (s + 1) * 100 + i;
const sumTo = (s: number, i: number): number => Array.from({ length: i + 1 }, (_, k) => valueOf(s, k)).reduce((a, b) => a + b, 0);

/** A correlation id for sequence `s`: numbers and strings alternate, both kinds in flight together. */
const idOf = (base: number, s: number): number | string => (s % 2 === 0 ? base + s : `seq-${base + s}`);

/**
 * `clients` clients each drive `perClient` sequences of `length` requests, interleaving their own
 * sequences step by step; every answer must be its own sequence's running sum.
 */
async function runInterleaved(clients: readonly InferenceClient[], model: string, options: { perClient: number; length: number; idBase: number }): Promise<void> {
  await Promise.all(
    clients.map(async (client, c) => {
      const sequences = Array.from({ length: options.perClient }, (_, k) => c * options.perClient + k);
      for (let i = 0; i < options.length; i++) {
        await Promise.all(
          sequences.map(async (s) => {
            const result = await client.infer(model, input(valueOf(s, i)), {
              sequenceId: idOf(options.idBase, s),
              sequenceStart: i === 0,
              sequenceEnd: i === options.length - 1,
            });
            assert.deepEqual([...(result.data('OUTPUT') as Int32Array)], [sumTo(s, i)], `${model} sequence ${s} step ${i}`);
          }),
        );
      }
    }),
  );
}

async function serverErrorOf(promise: Promise<unknown>): Promise<ServerError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  assert.ok(error instanceof ServerError, `expected a ServerError, got ${String(error)}`);
  return error;
}

describe('sequence batching end to end', () => {
  let root: string;
  let server: TestServer;
  let http: HttpClient[];
  let grpc: GrpcClient[];
  before(async () => {
    root = await makeRepository();
    server = await startTestServer({ modelRepositories: [root] });
    http = Array.from({ length: 4 }, () => new HttpClient(server.url));
    grpc = Array.from({ length: 3 }, () => new GrpcClient(server.grpcUrl!));
  });
  after(async () => {
    await Promise.all([...http, ...grpc].map((client) => client.close()));
    await server.close();
    await rm(root, { recursive: true, force: true });
  });

  for (const model of ['accumulator', 'accumulator_oldest']) {
    test(`${model}: 4 HTTP clients × 4 interleaved sequences of 6, numeric and string ids: every running sum exact`, async () => {
      await runInterleaved(http, model, { perClient: 4, length: 6, idBase: 1000 });
    });

    test(`${model}: 3 gRPC clients × 4 interleaved sequences of 6`, async () => {
      await runInterleaved(grpc, model, { perClient: 4, length: 6, idBase: 2000 });
    });
  }

  test('gRPC streams: each stream sends its sequences without waiting; the batcher keeps every sequence in order', async () => {
    const length = 8;
    await Promise.all(
      grpc.map(async (client, c) => {
        const stream = client.stream();
        const expected = new Map<string, number>();
        for (let i = 0; i < length; i++) {
          for (let k = 0; k < 3; k++) {
            const s = c * 3 + k;
            const id = stream.send('accumulator', input(valueOf(s, i)), {
              id: `${s}:${i}`,
              sequenceId: idOf(3000, s),
              sequenceStart: i === 0,
              sequenceEnd: i === length - 1,
            });
            expected.set(id, sumTo(s, i));
          }
        }
        stream.end();
        const answers = new Map<string, number>();
        for await (const response of stream as AsyncIterable<StreamResponse>) {
          assert.equal(response.error, undefined, response.error?.message);
          answers.set(response.id, (response.result!.data('OUTPUT') as Int32Array)[0]!);
        }
        assert.deepEqual(Object.fromEntries(answers), Object.fromEntries(expected));
      }),
    );
  });

  test("errors with Triton's status and message, over HTTP and gRPC", async () => {
    for (const client of [http[0]!, grpc[0]!]) {
      const protocol = client instanceof HttpClient ? 'http' : 'grpc';
      const noId = await serverErrorOf(client.infer('accumulator', input(1)));
      assert.equal(noId.status, 'INVALID_ARG', protocol);
      assert.equal(noId.message, "inference request to model 'accumulator' must specify a non-zero or non-empty correlation ID");
      const zero = await serverErrorOf(client.infer('accumulator', input(1), { sequenceId: 0, sequenceStart: true }));
      assert.equal(zero.message, "inference request to model 'accumulator' must specify a non-zero or non-empty correlation ID");
      const notStarted = await serverErrorOf(client.infer('accumulator', input(1), { sequenceId: 424242 }));
      assert.equal(notStarted.status, 'INVALID_ARG');
      assert.equal(notStarted.message, "inference request for sequence 424242 to model 'accumulator' must specify the START flag on the first request of the sequence");
      const notStartedText = await serverErrorOf(client.infer('accumulator', input(1), { sequenceId: 'never', id: 'r7' }));
      assert.equal(notStartedText.message, "[request id: r7] inference request for sequence never to model 'accumulator' must specify the START flag on the first request of the sequence");
      const batchOfTwo = await serverErrorOf(
        client.infer('accumulator', [{ name: 'INPUT', datatype: 'INT32', shape: [2, 1], data: [1, 2] }], { sequenceId: 5, sequenceStart: true }),
      );
      assert.equal(batchOfTwo.message, "inference request to model 'accumulator' must specify batch-size 1 due to requirements of sequence batcher");
      const badType = await serverErrorOf(client.infer('accumulator', input(1), { parameters: { sequence_id: true } }));
      assert.equal(badType.status, 'INVALID_ARG');
      // Each of Triton's front ends checks the parameter's type first, in its own words (TritonJson's over HTTP).
      assert.equal(
        badType.message,
        protocol === 'http'
          ? "Unable to parse 'sequence_id': attempt to access JSON non-string as string"
          : "invalid value type for 'sequence_id' parameter, expected int64_param or string_param.",
      );
      const badFlag = await serverErrorOf(client.infer('accumulator', input(1), { parameters: { sequence_id: 9, sequence_start: 'yes' } }));
      assert.equal(
        badFlag.message,
        protocol === 'http' ? "Unable to parse 'sequence_start': attempt to access JSON non-boolean as boolean" : "invalid value type for 'sequence_start' parameter, expected bool_param.",
      );
    }
  });

  test('a START for a sequence already running restarts it in its slot', async () => {
    const client = http[0]!;
    assert.deepEqual([...((await client.infer('accumulator', input(5), { sequenceId: 77, sequenceStart: true })).data('OUTPUT') as Int32Array)], [5]);
    assert.deepEqual([...((await client.infer('accumulator', input(5), { sequenceId: 77 })).data('OUTPUT') as Int32Array)], [10]);
    assert.deepEqual([...((await client.infer('accumulator', input(1), { sequenceId: 77, sequenceStart: true })).data('OUTPUT') as Int32Array)], [1]);
    assert.deepEqual([...((await client.infer('accumulator', input(1), { sequenceId: 77, sequenceEnd: true })).data('OUTPUT') as Int32Array)], [2]);
  });

  test('a sequence idle past max_sequence_idle_microseconds loses its slot and state', async () => {
    const client = http[1]!;
    await client.infer('accumulator_idle', input(3), { sequenceId: 88, sequenceStart: true });
    await sleep(600);
    const error = await serverErrorOf(client.infer('accumulator_idle', input(3), { sequenceId: 88 }));
    assert.equal(error.message, "inference request for sequence 88 to model 'accumulator_idle' must specify the START flag on the first request of the sequence");
    const restarted = await client.infer('accumulator_idle', input(3), { sequenceId: 88, sequenceStart: true, sequenceEnd: true });
    assert.deepEqual([...(restarted.data('OUTPUT') as Int32Array)], [3], 'a new sequence starts from the initial state');
  });

  test('implicit state in a JavaScript model: the running mean of each of 6 interleaved sequences', async () => {
    const values = [
      [1, 2, 3, 4],
      [10, 20, 30, 40],
      [5, 5, 5, 5],
      [0, 100, 0, 100],
      [7, 1, 7, 1],
      [2, 4, 8, 16],
    ];
    await Promise.all(
      values.map(async (sequence, s) => {
        const client = grpc[s % grpc.length]!;
        let sum = 0;
        for (const [i, value] of sequence.entries()) {
          const result = await client.infer('running_mean', [{ name: 'VALUE', datatype: 'FP32', shape: [1, 1], data: [value] }], {
            sequenceId: `mean-${s}`,
            sequenceStart: i === 0,
            sequenceEnd: i === sequence.length - 1,
          });
          sum += value;
          assert.deepEqual([...(result.data('MEAN') as Float32Array)], [Math.fround(sum / (i + 1))], `sequence ${s} step ${i}`);
        }
      }),
    );
  });

  test('a Python sequence model: implicit state, correlation_id() and flags() as Triton gives them', async () => {
    const answers = await Promise.all(
      [31, 'py-32', 33].map(async (sequenceId, s) => {
        const client = http[s]!;
        const rows: string[] = [];
        for (let i = 0; i < 3; i++) {
          const result = await client.infer('sequence_sum', [{ name: 'INPUT', datatype: 'INT64', shape: [1, 1], data: [BigInt(s * 10 + i + 1)] }], {
            sequenceId,
            sequenceStart: i === 0,
            sequenceEnd: i === 2,
          });
          rows.push(`${result.data('SUM')[0]}/${result.strings('CORRID')[0]}/${result.data('FLAGS')[0]}`);
        }
        return rows;
      }),
    );
    assert.deepEqual(answers, [
      ['1/31/1', '3/31/0', '6/31/2'],
      ['11/py-32/1', '23/py-32/0', '36/py-32/2'],
      ['21/33/1', '43/33/0', '66/33/2'],
    ]);
  });

  test('an ensemble passes the correlation id and flags to its sequence step', async () => {
    const client = grpc[0]!;
    const sums: number[] = [];
    for (let i = 0; i < 3; i++) {
      const result = await client.infer('accumulator_ensemble', [{ name: 'X', datatype: 'INT32', shape: [1, 1], data: [i + 1] }], {
        sequenceId: 'ensemble-1',
        sequenceStart: i === 0,
        sequenceEnd: i === 2,
      });
      sums.push((result.data('Y') as Int32Array)[0]!);
    }
    assert.deepEqual(sums, [1, 3, 6]);
    const error = await serverErrorOf(client.infer('accumulator_ensemble', [{ name: 'X', datatype: 'INT32', shape: [1, 1], data: [1] }]));
    assert.equal(error.message, "in ensemble 'accumulator_ensemble', inference request to model 'accumulator' must specify a non-zero or non-empty correlation ID (step 0, model 'accumulator')");
  });

  test('statistics count each request of a sequence once', async () => {
    const count = async (): Promise<number> => (await http[0]!.modelStatistics('accumulator_idle'))[0]!.inferenceCount;
    const before = await count();
    await http[0]!.infer('accumulator_idle', input(1), { sequenceId: 99, sequenceStart: true });
    await http[0]!.infer('accumulator_idle', input(1), { sequenceId: 99, sequenceEnd: true });
    assert.equal((await count()) - before, 2);
  });
});
