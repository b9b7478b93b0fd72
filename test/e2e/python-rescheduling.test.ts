import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { type Client, credentials } from '@grpc/grpc-js';
import type { InferRequest, InferResponse } from '../../src/core/index.js';
import { NereidError } from '../../src/core/index.js';
import { silentLogger } from '../../src/logging/logger.js';
import { type RunningServer, startServer } from '../../src/server.js';
import { loadGrpcServices } from '../helpers/plain-grpc-clients.js';
import { successful } from '../helpers/stream-responses.js';
import { PYTHON_FIXTURES } from '../helpers/python-models.js';

interface StreamReply {
  readonly error_message: string;
  readonly infer_response: { readonly id: string; readonly outputs: ReadonlyArray<{ readonly name: string }>; readonly raw_output_contents: Buffer[] };
}

/** Each response's OUT, FLAGS and CORRID, from a gRPC stream reply's raw outputs. */
function iterationOf(reply: StreamReply): [number, number, number] {
  const raw = (name: string): Buffer => Buffer.from(reply.infer_response.raw_output_contents[reply.infer_response.outputs.findIndex((output) => output.name === name)]!);
  return [raw('OUT').readInt32LE(0), raw('FLAGS').readInt32LE(0), Number(raw('CORRID').readBigUInt64LE(0))];
}

const inputOf = (value: number): InferRequest['inputs'][number] => ({ name: 'IN', dataType: 'INT32', shape: [1], data: new Int32Array([value]) });

async function statisticsOf(server: RunningServer, model: string): Promise<{ executions: number; inferences: number; success: number; fail: number }> {
  const response = await fetch(`${server.httpUrl}/v2/models/${model}/stats`);
  const body = (await response.json()) as {
    model_stats: Array<{ execution_count: number; inference_count: number; inference_stats: { success: { count: number }; fail: { count: number } } }>;
  };
  const [stats] = body.model_stats;
  return { executions: stats!.execution_count, inferences: stats!.inference_count, success: stats!.inference_stats.success.count, fail: stats!.inference_stats.fail.count };
}

describe('Python backend: request rescheduling (set_release_flags) and iterative sequences', () => {
  let server: RunningServer;
  before(async () => {
    server = await startServer({
      modelRepositories: [PYTHON_FIXTURES],
      modelControlMode: 'explicit',
      startupModels: ['iterative_sequence', 'rescheduling_addsub', 'reschedule_unsupported'],
      httpPort: 0,
      httpAddress: '127.0.0.1',
      grpcPort: 0,
      grpcAddress: '127.0.0.1',
      isMetricsAllowed: false,
      logger: silentLogger,
    });
  });
  after(() => server.shutdown());

  test('gRPC ModelStreamInfer: each request runs as its own sequence, one response per execution, until the model stops rescheduling it', async () => {
    const { inference: InferenceClient } = loadGrpcServices();
    const client: Client = new InferenceClient(server.grpcUrl!, credentials.createInsecure());
    try {
      const stream = (client as unknown as { ModelStreamInfer: () => NodeJS.ReadWriteStream & { write(message: object): void } }).ModelStreamInfer();
      const replies: StreamReply[] = [];
      const ended = new Promise<void>((resolve, reject) => {
        stream.on('data', (reply: StreamReply) => replies.push(reply));
        stream.on('end', resolve);
        stream.on('error', reject);
      });
      for (const [id, value] of [['countdown-3', 3], ['countdown-2', 2]] as const) {
        stream.write({
          model_name: 'iterative_sequence',
          id,
          inputs: [{ name: 'IN', datatype: 'INT32', shape: ['1'] }],
          raw_input_contents: [Buffer.from(new Int32Array([value]).buffer)],
        });
      }
      stream.end();
      await ended;
      assert.ok(replies.every((reply) => reply.error_message === ''));
      // Sequences get correlation ids 1, 2… in arrival order (Triton's IterativeSequencer); START only on the first execution.
      assert.deepEqual(
        replies.map((reply) => [reply.infer_response.id, ...iterationOf(reply)]),
        [
          ['countdown-3', 2, 1, 1],
          ['countdown-3', 1, 0, 1],
          ['countdown-3', 0, 0, 1],
          ['countdown-2', 1, 1, 2],
          ['countdown-2', 0, 0, 2],
        ],
      );
      // Each execution counts, as Triton's backends report every execution of a request.
      assert.deepEqual(await statisticsOf(server, 'iterative_sequence'), { executions: 5, inferences: 5, success: 5, fail: 0 });
    } finally {
      client.close();
    }
  });

  test("a request with the client's own correlation id keeps it on every execution", async () => {
    const responses: InferResponse[] = [];
    await server.core.inferStream(
      { modelName: 'iterative_sequence', id: '', parameters: { sequence_id: 42, sequence_start: true }, inputs: [inputOf(2)] },
      (response) => responses.push(successful(response)),
    );
    const valueOf = (response: InferResponse, name: string): number => Number((response.outputs.find((output) => output.name === name)!.data as ArrayLike<number | bigint>)[0]);
    assert.deepEqual(
      responses.map((response) => ['OUT', 'FLAGS', 'CORRID'].map((name) => valueOf(response, name))),
      [
        [1, 1, 42],
        [0, 0, 42],
      ],
    );
  });

  test('a request already answered with the final flag is not rescheduled: it ends, and the next sequence runs', async () => {
    const first: InferResponse[] = [];
    const second: InferResponse[] = [];
    await Promise.all([
      server.core.inferStream({ modelName: 'iterative_sequence', id: '', parameters: { final_then_reschedule: true }, inputs: [inputOf(3)] }, (response) => first.push(successful(response))),
      server.core.inferStream({ modelName: 'iterative_sequence', id: '', parameters: {}, inputs: [inputOf(1)] }, (response) => second.push(successful(response))),
    ]);
    const outOf = (response: InferResponse): number => (response.outputs.find((output) => output.name === 'OUT')!.data as Int32Array)[0]!;
    assert.deepEqual([first.map(outOf), second.map(outOf)], [[2], [0]]);
  });

  test('a default-mode model returns None for the request it reschedules, and answers it on a later execution', async () => {
    const body = {
      inputs: [
        { name: 'INPUT0', shape: [4], datatype: 'FP32', data: [1, 2, 3, 4] },
        { name: 'INPUT1', shape: [4], datatype: 'FP32', data: [0.5, 0.5, 0.5, 0.5] },
      ],
    };
    const before = await statisticsOf(server, 'rescheduling_addsub');
    const response = await fetch(`${server.httpUrl}/v2/models/rescheduling_addsub/infer`, { method: 'POST', body: JSON.stringify(body) });
    assert.equal(response.status, 200);
    const json = (await response.json()) as { outputs: Array<{ name: string; data: number[] }> };
    assert.deepEqual(
      json.outputs.map((output) => [output.name, output.data]),
      [
        ['OUTPUT0', [1.5, 2.5, 3.5, 4.5]],
        ['OUTPUT1', [0.5, 1.5, 2.5, 3.5]],
      ],
    );
    const stats = await statisticsOf(server, 'rescheduling_addsub');
    assert.deepEqual({ executions: stats.executions - before.executions, success: stats.success - before.success }, { executions: 2, success: 2 });

    const wrong = await fetch(`${server.httpUrl}/v2/models/rescheduling_addsub/infer`, { method: 'POST', body: JSON.stringify({ ...body, parameters: { wrong_return_type: true } }) });
    const { error } = (await wrong.json()) as { error: string };
    assert.equal(wrong.status, 500);
    assert.match(error, /message: Expected a None object in the execute function return list for reschduled request, found type '<class '[\w.]+'>'\.$/);
  });

  test("a model that reschedules without iterative_sequence fails the request with Triton's error, after the responses it sent", async () => {
    const responses: InferResponse[] = [];
    await assert.rejects(
      server.core.inferStream({ modelName: 'reschedule_unsupported', id: 'r1', parameters: {}, inputs: [inputOf(7)] }, (response) => responses.push(successful(response))),
      (error: unknown) =>
        error instanceof NereidError &&
        error.status === 'INVALID_ARG' &&
        error.message ===
          '[request id: r1] Request is released with TRITONSERVER_REQUEST_RELEASE_RESCHEDULE, while the model is not configured to handle such a flag. Only a model with sequence_batching { iterative_sequence: true } can reschedule a request',
    );
    assert.deepEqual(
      responses.map((response) => [...(response.outputs[0]!.data as Int32Array)]),
      [[7]],
    );
  });
});
