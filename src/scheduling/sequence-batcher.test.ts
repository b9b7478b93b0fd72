import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { create } from '@bufbuild/protobuf';
import type { ExecuteResult, ModelInstance } from '../kernel/model-instance.js';
import type { NereidError } from '../kernel/errors.js';
import type { InferRequest } from '../kernel/infer-request.js';
import type { Tensor } from '../kernel/tensor.js';
import { ModelStatistics } from '../metrics/model-statistics.js';
import {
  DataType,
  ModelSequenceBatchingSchema,
  ModelSequenceBatching_ControlInputSchema,
  ModelSequenceBatching_ControlSchema,
  ModelSequenceBatching_Control_Kind as Kind,
} from '../protocol/gen/model_config_pb.js';
import { FakeClock } from '../../test/helpers/fake-clock.js';
import { InstancePool } from './instance-pool.js';
import { type DirectStrategy, type OldestStrategy, SequenceBatcher } from './sequence-batcher.js';
import { SequenceControls } from './sequence-controls.js';
import { SequenceStates, type StateSpec } from './sequence-states.js';

const flush = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** What one slot of an execution saw: the request id ('' for padding) and its control values. */
interface SlotView {
  readonly id: string;
  readonly start: number;
  readonly end: number;
  readonly ready: number;
  readonly corrid: bigint;
  readonly state?: number;
}

/**
 * An accumulator the test completes by hand: OUT = IN + STATE and STATE_OUT = OUT, so a running sum
 * shows whether each sequence got its own state.
 */
class FakeInstance implements ModelInstance {
  readonly executions: SlotView[][] = [];
  /** How many more times the model releases the request of each id with RESCHEDULE. */
  readonly reschedules = new Map<string, number>();
  readonly #running: Array<() => void> = [];
  constructor(readonly name: string) {}
  execute(requests: readonly InferRequest[]): Promise<ExecuteResult> {
    const value = (request: InferRequest, name: string): number | bigint | undefined => {
      const data = request.inputs.find((input) => input.name === name)?.data as ArrayLike<number | bigint> | undefined;
      return data?.[0];
    };
    this.executions.push(
      requests.map((request) => ({
        id: request.id,
        start: Number(value(request, 'START')),
        end: Number(value(request, 'END')),
        ready: Number(value(request, 'READY')),
        corrid: BigInt(value(request, 'CORRID') ?? 0),
        ...(value(request, 'STATE') !== undefined ? { state: Number(value(request, 'STATE')) } : {}),
      })),
    );
    const rescheduled = new Set<number>();
    requests.forEach((request, index) => {
      const left = this.reschedules.get(request.id) ?? 0;
      if (left === 0) return;
      this.reschedules.set(request.id, left - 1);
      rescheduled.add(index);
    });
    return new Promise((resolve) => {
      this.#running.push(() =>
        resolve({
          ...(rescheduled.size > 0 ? { rescheduled } : {}),
          responses: requests.map((request) => {
            const sum = Number(value(request, 'IN')) + Number(value(request, 'STATE') ?? 0);
            const outputs: Tensor[] = [{ name: 'OUT', dataType: 'INT32', shape: [1, 1], data: Int32Array.of(sum) }];
            if (request.outputs?.some((output) => output.name === 'STATE_OUT')) outputs.push({ name: 'STATE_OUT', dataType: 'INT32', shape: [1, 1], data: Int32Array.of(sum) });
            return outputs;
          }),
          timing: { inputNs: 1, inferNs: 1, outputNs: 1 },
        }),
      );
    });
  }
  get runningCount(): number {
    return this.#running.length;
  }
  async finish(): Promise<void> {
    this.#running.shift()!();
    await flush();
  }
  async close(): Promise<void> {}
}

const control = (name: string, kind: Kind, extra: Record<string, unknown>) =>
  create(ModelSequenceBatching_ControlInputSchema, { name, control: [create(ModelSequenceBatching_ControlSchema, { kind, ...extra })] });

const BATCHING = create(ModelSequenceBatchingSchema, {
  controlInput: [
    control('START', Kind.CONTROL_SEQUENCE_START, { int32FalseTrue: [0, 1] }),
    control('END', Kind.CONTROL_SEQUENCE_END, { int32FalseTrue: [0, 1] }),
    control('READY', Kind.CONTROL_SEQUENCE_READY, { int32FalseTrue: [0, 1] }),
    control('CORRID', Kind.CONTROL_SEQUENCE_CORRID, { dataType: DataType.TYPE_UINT64 }),
  ],
});

const WITHOUT_CORRID = create(ModelSequenceBatchingSchema, { controlInput: BATCHING.controlInput.slice(0, 3) });

const STATE: StateSpec = { inputName: 'STATE', outputName: 'STATE_OUT', initial: { dataType: 'INT32', shape: [1], data: Int32Array.of(100) } };

interface SetupOptions {
  readonly instanceCount?: number;
  readonly maxBatchSize?: number;
  readonly strategy?: DirectStrategy | OldestStrategy;
  readonly idleUs?: number;
  readonly states?: readonly StateSpec[];
  readonly batching?: typeof BATCHING;
  readonly isIterative?: boolean;
  readonly delayUntilQueued?: number;
}

function setup(options: SetupOptions = {}) {
  const clock = new FakeClock();
  const instances = Array.from({ length: options.instanceCount ?? 1 }, (_, i) => new FakeInstance(`m_${i}`));
  const maxBatchSize = options.maxBatchSize ?? 2;
  const statistics = new ModelStatistics('m', 1);
  const batcher = new SequenceBatcher({
    modelName: 'm',
    pool: new InstancePool(instances),
    statistics,
    clock,
    maxBatchSize,
    strategy: options.strategy ?? { kind: 'direct', maxQueueDelayUs: 0, minimumSlotUtilization: 0 },
    maxSequenceIdleUs: options.idleUs ?? 1_000_000,
    controls: new SequenceControls(options.batching ?? BATCHING, maxBatchSize > 0),
    states: new SequenceStates(options.states ?? [], maxBatchSize > 0),
    isIterative: options.isIterative ?? false,
    delayUntilQueued: options.delayUntilQueued ?? 0,
  });
  const outcomes = new Map<string, string>();
  const send = (id: string, sequenceId: number | string, value: number, flags: { start?: boolean; end?: boolean; batch?: number; signal?: AbortSignal } = {}): void => {
    const batch = flags.batch ?? 1;
    const parameters: Record<string, number | string | boolean> = { sequence_id: sequenceId };
    if (flags.start === true) parameters.sequence_start = true;
    if (flags.end === true) parameters.sequence_end = true;
    const request: InferRequest = {
      modelName: 'm',
      id,
      parameters,
      inputs: [{ name: 'IN', dataType: 'INT32', shape: [batch, 1], data: new Int32Array(batch).fill(value) }],
      outputs: [{ name: 'OUT' }],
      ...(flags.signal !== undefined ? { signal: flags.signal } : {}),
    };
    batcher.enqueue(request).then(
      (outputs) => outcomes.set(id, outputs.map((output) => `${output.name}=${(output.data as Int32Array)[0]}`).join(',')),
      (error: NereidError) => outcomes.set(id, `${error.status}: ${error.message}`),
    );
  };
  return { clock, instances, instance: instances[0]!, batcher, statistics, send, outcomes };
}

describe('SequenceBatcher, direct', () => {
  test("a request cancelled while queued cancels its sequence's queued requests, as Triton does; none of them runs", async () => {
    const { instance, send, outcomes, statistics } = setup({ maxBatchSize: 1 });
    const cancel = new AbortController();
    send('a1', 7, 1, { start: true });
    send('a2', 7, 2, { signal: cancel.signal });
    send('a3', 7, 3, { end: true });
    send('b1', 8, 4, { start: true, end: true });
    await flush();
    cancel.abort();
    await flush();
    assert.equal(outcomes.get('a2'), "CANCELLED: [request id: a2] the request to model 'm' was cancelled while it waited in the queue");
    assert.equal(outcomes.get('a3'), "CANCELLED: [request id: a3] the request to model 'm' was cancelled while it waited in the queue");
    await instance.finish();
    assert.deepEqual(
      instance.executions.map((execution) => execution.map((slot) => slot.id)),
      [['a1'], ['b1']],
      'the ended sequence frees its slot for the backlogged one',
    );
    await instance.finish();
    assert.equal(outcomes.get('b1'), 'OUT=4');
    assert.deepEqual(statistics.snapshot().failuresByReason, { REJECTED: 0, CANCELED: 2, BACKEND: 0, OTHER: 0 });
  });

  test('TRITONSERVER_DELAY_SCHEDULER: nothing runs until that many requests are queued across the instances, then every slot fills', async () => {
    const { instances, send, outcomes } = setup({ instanceCount: 2, delayUntilQueued: 4 });
    send('a1', 11, 1, { start: true });
    send('b1', 22, 2, { start: true });
    send('c1', 33, 3, { start: true });
    await flush();
    assert.deepEqual(
      instances.map((instance) => instance.executions.length),
      [0, 0],
      'three queued of four: no instance runs',
    );
    send('d1', 44, 4, { start: true, end: true });
    await flush();
    assert.deepEqual(
      instances.map((instance) => instance.executions.map((execution) => execution.map((slot) => slot.id))),
      [[['a1', 'c1']], [['b1', 'd1']]],
      'the fourth ends the delay: both instances run full batches',
    );
    await instances[1]!.finish();
    assert.equal(outcomes.get('d1'), 'OUT=4');
  });

  test('each sequence gets a slot, the lowest slot first across instances; START, END, READY and CORRID fill every slot', async () => {
    const { instances, send, outcomes } = setup({ instanceCount: 2 });
    send('a1', 11, 1, { start: true });
    send('b1', 22, 2, { start: true });
    send('c1', 33, 3, { start: true });
    await flush();
    // a → instance 0 slot 0, b → instance 1 slot 0, c → instance 0 slot 1 (queued behind a's execution).
    assert.deepEqual(instances[0]!.executions, [[{ id: 'a1', start: 1, end: 0, ready: 1, corrid: 11n }]]);
    assert.deepEqual(instances[1]!.executions, [[{ id: 'b1', start: 1, end: 0, ready: 1, corrid: 22n }]]);
    send('a2', 11, 10, { end: true });
    await instances[0]!.finish();
    assert.equal(outcomes.get('a1'), 'OUT=1');
    assert.deepEqual(instances[0]!.executions[1], [
      { id: 'a2', start: 0, end: 1, ready: 1, corrid: 11n },
      { id: 'c1', start: 1, end: 0, ready: 1, corrid: 33n },
    ]);
    await instances[0]!.finish();
    // a has ended: its slot 0 is empty, so c's next request runs behind padding that is not ready.
    send('c2', 33, 4);
    await flush();
    assert.deepEqual(instances[0]!.executions[2], [
      { id: '', start: 0, end: 0, ready: 0, corrid: 0n },
      { id: 'c2', start: 0, end: 0, ready: 1, corrid: 33n },
    ]);
    await instances[0]!.finish();
    assert.equal(outcomes.get('c2'), 'OUT=4');
  });

  test('the requests of one sequence run one at a time, in order', async () => {
    const { instance, send, outcomes } = setup();
    send('r1', 5, 1, { start: true });
    send('r2', 5, 2);
    send('r3', 5, 3, { end: true });
    await flush();
    assert.equal(instance.runningCount, 1);
    assert.deepEqual(instance.executions.map((execution) => execution.map((slot) => slot.id)), [['r1']]);
    await instance.finish();
    await instance.finish();
    await instance.finish();
    assert.deepEqual(instance.executions.map((execution) => execution.map((slot) => slot.id)), [['r1'], ['r2'], ['r3']]);
    assert.deepEqual([...outcomes.keys()], ['r1', 'r2', 'r3']);
  });

  test('a sequence beyond the free slots waits in the backlog and takes the first slot that frees', async () => {
    const { instance, batcher, send, outcomes } = setup({ maxBatchSize: 1 });
    send('a1', 1, 1, { start: true });
    send('b1', 2, 2, { start: true });
    send('b2', 2, 3, { end: true });
    await flush();
    assert.deepEqual(batcher.sequenceCounts, { active: 1, backlogged: 1 });
    assert.equal(batcher.queuedCount, 2);
    await instance.finish();
    assert.equal(outcomes.get('a1'), 'OUT=1');
    assert.equal(instance.runningCount, 0, 'b waits: a holds the only slot until it ends');
    send('a2', 1, 1, { end: true });
    await flush();
    await instance.finish();
    assert.deepEqual(batcher.sequenceCounts, { active: 1, backlogged: 0 });
    await instance.finish();
    await instance.finish();
    assert.deepEqual(instance.executions.map((execution) => execution.map((slot) => slot.id)), [['a1'], ['a2'], ['b1'], ['b2']]);
    assert.deepEqual(batcher.sequenceCounts, { active: 0, backlogged: 0 });
  });

  test('an idle sequence loses its slot after max_sequence_idle_microseconds; its next request without START is refused', async () => {
    const { clock, instance, batcher, send, outcomes } = setup({ maxBatchSize: 1, idleUs: 5000 });
    send('a1', 1, 1, { start: true });
    send('b1', 2, 2, { start: true });
    await flush();
    await instance.finish();
    clock.advance(4999);
    assert.equal(instance.runningCount, 0);
    clock.advance(1);
    await flush();
    assert.deepEqual(instance.executions.map((execution) => execution.map((slot) => slot.id)), [['a1'], ['b1']], 'b took the slot a left');
    send('a2', 1, 1);
    await flush();
    assert.equal(
      outcomes.get('a2'),
      "INVALID_ARG: [request id: a2] inference request for sequence 1 to model 'm' must specify the START flag on the first request of the sequence",
    );
    await instance.finish();
    assert.equal(batcher.inflightCount, 0);
  });

  test('with max_queue_delay_microseconds, an instance waits for minimum_slot_utilization of its slots or for the delay', async () => {
    const { clock, instance, send } = setup({ maxBatchSize: 4, strategy: { kind: 'direct', maxQueueDelayUs: 1000, minimumSlotUtilization: 0.5 } });
    send('a1', 1, 1, { start: true });
    await flush();
    assert.equal(instance.runningCount, 0);
    send('b1', 2, 1, { start: true });
    await flush();
    assert.deepEqual(instance.executions.map((execution) => execution.map((slot) => slot.id)), [['a1', 'b1']], 'two of four slots ready: 0.5 reached');
    await instance.finish();
    send('a2', 1, 1);
    await flush();
    assert.equal(instance.runningCount, 0);
    clock.advance(1000);
    await flush();
    assert.deepEqual(instance.executions[1]!.map((slot) => slot.id), ['a2']);
  });

  test("Triton's refusals: no correlation id, no START, a batch of two, a string id for a UINT64 CORRID", async () => {
    const { send, outcomes, batcher } = setup();
    send('zero', 0, 1, { start: true });
    send('empty', '', 1, { start: true });
    send('late', 7, 1);
    send('two', 8, 1, { start: true, batch: 2 });
    send('text', 'abc', 1, { start: true });
    await flush();
    assert.deepEqual(Object.fromEntries(outcomes), {
      zero: "INVALID_ARG: [request id: zero] inference request to model 'm' must specify a non-zero or non-empty correlation ID",
      empty: "INVALID_ARG: [request id: empty] inference request to model 'm' must specify a non-zero or non-empty correlation ID",
      late: "INVALID_ARG: [request id: late] inference request for sequence 7 to model 'm' must specify the START flag on the first request of the sequence",
      two: "INVALID_ARG: [request id: two] inference request to model 'm' must specify batch-size 1 due to requirements of sequence batcher",
      text: "INVALID_ARG: [request id: text] inference request for sequence abc to model 'm' gives a string correlation ID, but control input 'CORRID' of kind CONTROL_SEQUENCE_CORRID has data type UINT64; send an unsigned integer sequence_id, or set the control's data_type to TYPE_STRING",
    });
    assert.equal(batcher.inflightCount, 0);
  });

  test('the uint64 1 and the string "1" are different sequences', async () => {
    const { send, outcomes, instance } = setup({ batching: WITHOUT_CORRID });
    send('n', 1, 1, { start: true });
    await flush();
    send('s', '1', 1);
    await flush();
    assert.match(outcomes.get('s')!, /sequence 1 to model 'm' must specify the START flag/);
    await instance.finish();
  });
});

describe('SequenceBatcher, implicit state', () => {
  test('a state is carried from each response to the next request, reset at START and freed at END', async () => {
    // Both slots must be ready before the instance runs, so that the two sequences share each execution.
    const { instance, send, outcomes } = setup({ states: [STATE], strategy: { kind: 'direct', maxQueueDelayUs: 1_000_000, minimumSlotUtilization: 1 } });
    send('a1', 1, 1, { start: true });
    send('b1', 2, 5, { start: true });
    await flush();
    await instance.finish();
    send('a2', 1, 2);
    send('b2', 2, 6, { end: true });
    await flush();
    await instance.finish();
    assert.deepEqual(
      instance.executions.map((execution) => execution.map((slot) => `${slot.id}:${slot.state}`)),
      [['a1:100', 'b1:100'], ['a2:101', 'b2:105']],
    );
    // The state output is the server's: the client, which asked for OUT only, does not get it.
    assert.deepEqual(Object.fromEntries(outcomes), { a1: 'OUT=101', b1: 'OUT=105', a2: 'OUT=103', b2: 'OUT=111' });
    send('b3', 2, 1, { start: true });
    send('a3', 1, 1, { start: true });
    await flush();
    await instance.finish();
    assert.deepEqual(instance.executions[2]!.map((slot) => `${slot.id}:${slot.state}`), ['a3:100', 'b3:100'], 'a restarted, b is new: both from the initial state');
  });
});

describe('SequenceBatcher, oldest', () => {
  const oldest = (overrides: Partial<OldestStrategy> = {}): OldestStrategy => ({
    kind: 'oldest',
    maxCandidateSequences: 4,
    preferredBatchSizes: [2],
    maxQueueDelayUs: 1000,
    preserveOrdering: false,
    ...overrides,
  });

  test('batches the oldest ready requests, at most one per sequence, once a preferred size is reached', async () => {
    const { clock, instance, send } = setup({ maxBatchSize: 2, strategy: oldest() });
    send('a1', 1, 1, { start: true });
    clock.advance(10);
    send('a2', 1, 1);
    await flush();
    assert.equal(instance.runningCount, 0, 'one sequence alone waits for the delay');
    send('b1', 2, 1, { start: true });
    clock.advance(10);
    send('c1', 3, 1, { start: true });
    await flush();
    assert.deepEqual(instance.executions.map((execution) => execution.map((slot) => slot.id)), [['a1', 'b1']]);
    await instance.finish();
    assert.deepEqual(instance.executions[1]!.map((slot) => slot.id), ['a2', 'c1'], 'a2 is older than c1');
    await instance.finish();
  });

  test('the oldest request waits at most max_queue_delay_microseconds', async () => {
    const { clock, instance, send, outcomes } = setup({ maxBatchSize: 2, strategy: oldest() });
    send('a1', 1, 1, { start: true, end: true });
    await flush();
    clock.advance(999);
    assert.equal(instance.runningCount, 0);
    clock.advance(1);
    await flush();
    assert.deepEqual(instance.executions, [[{ id: 'a1', start: 1, end: 1, ready: 1, corrid: 1n }]]);
    await instance.finish();
    assert.equal(outcomes.get('a1'), 'OUT=1');
  });

  test('max_candidate_sequences bounds the sequences of an instance; the rest wait in the backlog', async () => {
    const { instance, batcher, send } = setup({ maxBatchSize: 2, strategy: oldest({ maxCandidateSequences: 2, maxQueueDelayUs: 0 }) });
    send('a1', 1, 1, { start: true });
    send('b1', 2, 1, { start: true });
    send('c1', 3, 1, { start: true });
    await flush();
    assert.deepEqual(batcher.sequenceCounts, { active: 2, backlogged: 1 });
    await instance.finish();
    assert.deepEqual(instance.executions.map((execution) => execution.map((slot) => slot.id)), [['a1'], ['b1']], 'c1 waits for a slot');
    assert.deepEqual(batcher.sequenceCounts, { active: 2, backlogged: 1 });
    await instance.finish();
  });

  test('with preserve_ordering, responses come back in the order their requests left the queues', async () => {
    const { instances, send, outcomes } = setup({ instanceCount: 2, maxBatchSize: 1, strategy: oldest({ maxCandidateSequences: 1, maxQueueDelayUs: 0, preserveOrdering: true, preferredBatchSizes: [1] }) });
    send('a1', 1, 1, { start: true });
    send('b1', 2, 1, { start: true });
    await flush();
    await instances[1]!.finish();
    assert.deepEqual([...outcomes.keys()], [], 'b1 is held until a1, which left first, is answered');
    await instances[0]!.finish();
    assert.deepEqual([...outcomes.keys()], ['a1', 'b1']);
  });
});

test('statistics count the requests that ran, not the padding of empty slots', async () => {
  const { instance, send, statistics } = setup();
  send('a1', 1, 1, { start: true });
  send('b1', 2, 1, { start: true });
  await flush();
  await instance.finish();
  await instance.finish();
  send('b2', 2, 1, { end: true });
  await flush();
  await instance.finish();
  assert.equal(instance.executions.flat().length, 5, 'a1, then b1 and b2 each behind the padding of slot 0');
  const stats = statistics.snapshot();
  assert.equal(stats.inferenceCount, 3);
  assert.equal(stats.executionCount, 3);
});

test('close fails what is still queued once the wait is over', async () => {
  const { instance, batcher, send, outcomes } = setup({ maxBatchSize: 1 });
  send('a1', 1, 1, { start: true });
  send('b1', 2, 1, { start: true });
  await flush();
  const closing = batcher.close({ isForced: true });
  await instance.finish();
  await closing;
  assert.equal(outcomes.get('b1'), "UNAVAILABLE: model 'm' was unloaded before the request ran");
  assert.equal(outcomes.get('a1'), 'OUT=1');
});

describe('SequenceBatcher, iterative_sequence', () => {
  test('a request without a correlation id is a sequence of its own: rescheduled, it runs again in its slot without START until released', async () => {
    const { instance, send, outcomes, statistics } = setup({ maxBatchSize: 1, isIterative: true });
    instance.reschedules.set('a', 2);
    send('a', 0, 5);
    send('b', 0, 6);
    await flush();
    for (let execution = 0; execution < 3; execution++) await instance.finish();
    assert.equal(outcomes.get('a'), 'OUT=5');
    assert.equal(outcomes.has('b'), false, 'b waited for the slot until a was released');
    await instance.finish();
    assert.equal(outcomes.get('b'), 'OUT=6');
    assert.deepEqual(
      instance.executions.map(([slot]) => [slot!.id, slot!.start, slot!.end, slot!.corrid]),
      [
        ['a', 1, 0, 1n],
        ['a', 0, 0, 1n],
        ['a', 0, 0, 1n],
        ['b', 1, 0, 2n],
      ],
    );
    const stats = statistics.snapshot();
    assert.deepEqual([stats.executionCount, stats.inferenceCount], [4, 4]);
  });

  test('a request cancelled while it runs is not run again though its model rescheduled it; its slot frees', async () => {
    const { instance, send, outcomes } = setup({ maxBatchSize: 1, isIterative: true });
    const cancel = new AbortController();
    instance.reschedules.set('a', 1);
    send('a', 0, 5, { signal: cancel.signal });
    send('b', 0, 6);
    await flush();
    cancel.abort();
    await instance.finish();
    assert.equal(outcomes.get('a'), "CANCELLED: [request id: a] the request to model 'm' was cancelled while it was executing; its result was dropped");
    await instance.finish();
    assert.deepEqual(
      instance.executions.map(([slot]) => slot!.id),
      ['a', 'b'],
    );
  });

  test("without iterative_sequence a rescheduled request fails with Triton's error", async () => {
    const { instance, send, outcomes } = setup({ maxBatchSize: 1 });
    instance.reschedules.set('a', 1);
    send('a', 7, 5, { start: true });
    await flush();
    await instance.finish();
    assert.equal(
      outcomes.get('a'),
      'INVALID_ARG: [request id: a] Request is released with TRITONSERVER_REQUEST_RELEASE_RESCHEDULE, while the model is not configured to handle such a flag. Only a model with sequence_batching { iterative_sequence: true } can reschedule a request',
    );
  });
});
