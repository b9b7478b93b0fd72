import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, test } from 'node:test';
import { type Client, type ClientDuplexStream, type ClientUnaryCall, credentials } from '@grpc/grpc-js';
import { loadGrpcServices } from '../helpers/plain-grpc-clients.js';
import { type RunningServer, startServer } from '../../src/server.js';
import { silentLogger } from '../../src/logging/logger.js';
import type { InferRequest } from '../../src/core/index.js';

const CANCEL_REPOSITORY = fileURLToPath(new URL('../fixtures/cancel_repository', import.meta.url));

/** Two requests of a model with one instance: one runs, one waits in the queue; then both are cancelled. */
describe('request cancellation (Triton docs/user_guide/request_cancellation.md)', () => {
  let server: RunningServer;
  let grpc: Client;
  before(async () => {
    server = await startServer({
      modelRepositories: [CANCEL_REPOSITORY],
      httpPort: 0,
      httpAddress: '127.0.0.1',
      grpcPort: 0,
      grpcAddress: '127.0.0.1',
      metricsPort: 0,
      logger: silentLogger,
    });
    const { inference: InferenceClient } = loadGrpcServices();
    grpc = new InferenceClient(server.grpcUrl!, credentials.createInsecure());
  });
  after(async () => {
    grpc.close();
    await server.shutdown();
  });

  /** A request of js_wait or py_wait; py_wait does not batch. */
  const jsonBody = (parameters: Record<string, unknown> = {}, shape = [1, 1]): string => JSON.stringify({ inputs: [{ name: 'X', datatype: 'FP32', shape, data: [7] }], parameters });
  const grpcRequest = { model_name: 'js_wait', inputs: [{ name: 'X', datatype: 'FP32', shape: [1, 1], contents: { fp32_contents: [7] } }] };
  const coreRequest = (modelName: string, id: string, signal: AbortSignal): InferRequest => ({
    modelName,
    id,
    parameters: {},
    inputs: [{ name: 'X', dataType: 'FP32', shape: modelName === 'py_wait' ? [1] : [1, 1], data: new Float32Array([7]) }],
    signal,
  });

  /** One counter of /metrics, 0 when it has no sample yet. */
  const metric = async (name: string, labels: string): Promise<number> => {
    const text = await (await fetch(`${server.metricsUrl}/metrics`)).text();
    const line = text.split('\n').find((candidate) => candidate.startsWith(`${name}{${labels}}`));
    return line === undefined ? 0 : Number(line.split(' ').at(-1));
  };
  const failures = (model: string, reason: string): Promise<number> => metric('nv_inference_request_failure', `model="${model}",version="1",reason="${reason}"`);
  const pending = (model: string): Promise<number> => metric('nv_inference_pending_request_count', `model="${model}",version="1"`);
  const statistics = async (model: string): Promise<{ executions: number; success: number; fail: number }> => {
    const json = (await (await fetch(`${server.httpUrl}/v2/models/${model}/stats`)).json()) as {
      model_stats: Array<{ execution_count: number; inference_stats: { success: { count: number }; fail: { count: number } } }>;
    };
    const stats = json.model_stats[0]!;
    return { executions: stats.execution_count, success: stats.inference_stats.success.count, fail: stats.inference_stats.fail.count };
  };
  /** How many cancelled requests the model saw while running them (its `report` request). */
  const cancelledSeen = async (model: string): Promise<number> => {
    const response = await fetch(`${server.httpUrl}/v2/models/${model}/infer`, { method: 'POST', body: jsonBody({ report: true }, model === 'py_wait' ? [1] : [1, 1]) });
    const json = (await response.json()) as { outputs: Array<{ data: number[] }> };
    return json.outputs[0]!.data[0]!;
  };
  /** Polls until `check` holds (the test runner's timeout bounds the wait). */
  const until = async (check: () => Promise<boolean>): Promise<void> => {
    while (!(await check())) await sleep(10);
  };

  /**
   * Starts two requests with `send`, waits until one runs and the other is queued, cancels both with
   * `cancel`, and checks that the queued one never ran (a CANCELED failure) while the running one was
   * told (the model saw it cancelled) and ran to its end.
   */
  async function checkCancellation(model: string, send: () => () => void, expected: { readonly executionsOfRunning: number }): Promise<void> {
    const before = { stats: await statistics(model), seen: await cancelledSeen(model), canceled: await failures(model, 'CANCELED') };
    const cancelFirst = send();
    const cancelSecond = send();
    await until(async () => (await pending(model)) === 1);
    cancelSecond();
    cancelFirst();
    await until(async () => (await failures(model, 'CANCELED')) === before.canceled + 1);
    assert.equal(await cancelledSeen(model), before.seen + 1, 'the running request was told it was cancelled');
    const after = await statistics(model);
    // +1: the report request just made.
    assert.equal(after.executions, before.stats.executions + 1 + 1 + expected.executionsOfRunning, 'the queued request never ran');
    assert.equal(await pending(model), 0);
  }

  test('HTTP: a client that closes its connection cancels its request, queued or running', async () => {
    await checkCancellation(
      'js_wait',
      () => {
        const abort = new AbortController();
        fetch(`${server.httpUrl}/v2/models/js_wait/infer`, { method: 'POST', body: jsonBody(), signal: abort.signal }).catch(() => {});
        return () => abort.abort();
      },
      { executionsOfRunning: 1 },
    );
  });

  test('gRPC: a cancelled ModelInfer call cancels its request, queued or running', async () => {
    await checkCancellation(
      'js_wait',
      () => {
        const call = (grpc as unknown as { ModelInfer(request: unknown, callback: (error: Error | null) => void): ClientUnaryCall }).ModelInfer(grpcRequest, () => {});
        return () => call.cancel();
      },
      { executionsOfRunning: 1 },
    );
  });

  test('gRPC: a cancelled ModelStreamInfer stream cancels its requests, queued or running', async () => {
    const stream = (grpc as unknown as { ModelStreamInfer(): ClientDuplexStream<unknown, unknown> }).ModelStreamInfer();
    stream.on('error', () => {});
    const before = await failures('js_wait', 'CANCELED');
    await checkCancellation(
      'js_wait',
      () => {
        stream.write(grpcRequest);
        return () => stream.cancel();
      },
      { executionsOfRunning: 1 },
    );
    assert.equal(await failures('js_wait', 'CANCELED'), before + 1);
  });

  test('in process: an aborted signal rejects the request CANCELLED, queued or running', async () => {
    const running = new AbortController();
    const queued = new AbortController();
    // Enqueued in call order: the first runs, the second waits.
    const first = server.core.infer(coreRequest('js_wait', 'first', running.signal));
    const second = server.core.infer(coreRequest('js_wait', 'second', queued.signal));
    await until(async () => (await pending('js_wait')) === 1);
    queued.abort();
    await assert.rejects(second, { status: 'CANCELLED', message: "[request id: second] the request to model 'js_wait' was cancelled while it waited in the queue" });
    running.abort();
    await assert.rejects(first, { status: 'CANCELLED', message: "[request id: first] the request to model 'js_wait' was cancelled while it was executing; its result was dropped" });
  });

  test("Python: request.is_cancelled() turns true once the client has gone; a queued request never reaches execute", async () => {
    const before = { seen: await cancelledSeen('py_wait'), canceled: await failures('py_wait', 'CANCELED'), backend: await failures('py_wait', 'BACKEND') };
    const stats = await statistics('py_wait');
    const send = (): AbortController => {
      const abort = new AbortController();
      fetch(`${server.httpUrl}/v2/models/py_wait/infer`, { method: 'POST', body: jsonBody({}, [1]), signal: abort.signal }).catch(() => {});
      return abort;
    };
    const running = send();
    const queued = send();
    await until(async () => (await pending('py_wait')) === 1);
    queued.abort();
    running.abort();
    await until(async () => (await failures('py_wait', 'BACKEND')) === before.backend + 1);
    assert.equal(await failures('py_wait', 'CANCELED'), before.canceled + 1, 'the queued request failed CANCELED, unexecuted');
    assert.equal(await cancelledSeen('py_wait'), before.seen + 1, 'the running request saw is_cancelled() turn true and answered CANCELLED');
    // The running request answered with an error, which completes no execution: only the report request counts.
    assert.equal((await statistics('py_wait')).executions, stats.executions + 1, 'the queued request never ran');
  });

  test('an ensemble request cancelled cancels its step: the queued step never runs', async () => {
    const before = { step: await failures('js_wait', 'CANCELED'), ensemble: await failures('ens_wait', 'CANCELED'), seen: await cancelledSeen('js_wait') };
    const running = new AbortController();
    const queued = new AbortController();
    const first = server.core.infer(coreRequest('ens_wait', 'first', running.signal));
    const second = server.core.infer(coreRequest('ens_wait', 'second', queued.signal));
    await until(async () => (await pending('js_wait')) === 1);
    queued.abort();
    running.abort();
    await assert.rejects(second, { status: 'CANCELLED', message: "[request id: second] the request to model 'ens_wait' was cancelled while it was executing; its result was dropped" });
    await assert.rejects(first, { status: 'CANCELLED' });
    assert.equal(await failures('js_wait', 'CANCELED'), before.step + 1, 'the queued step left its queue unexecuted');
    assert.equal(await failures('ens_wait', 'CANCELED'), before.ensemble + 2);
    assert.equal(await cancelledSeen('js_wait'), before.seen + 1, 'the running step was told');
  });
});
