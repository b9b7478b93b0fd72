import assert from 'node:assert/strict';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { test, type TestContext } from 'node:test';
import { loadModelSpec } from '../../config/model-spec.js';
import { parseModelConfig } from '../../config/parse-model-config.js';
import type { InferRequest } from '../../kernel/infer-request.js';
import type { Tensor } from '../../kernel/tensor.js';
import { silentLogger } from '../../logging/logger.js';
import { closeMapping, loadShmAddon, type ShmAddon, trackMapping } from '../../util/mapped-memory.js';
import type { DataType } from '../../protocol/data-type.js';
import type { InlinePolicy } from './inline-guard.js';
import { OrtInstance } from './ort-instance.js';
import { sessionOptionsFromConfig } from './session-options.js';

const MODEL_DIR = fileURLToPath(new URL('../../../test/fixtures/model_repository/identity_all_types', import.meta.url));

/** Inline from the first run on, counting the inline runs. */
class AlwaysInline implements InlinePolicy {
  inlineRuns = 0;
  recordThreadRun(): boolean {
    return true;
  }
  allows(): boolean {
    return true;
  }
  recordInlineRun(): boolean {
    this.inlineRuns++;
    return true;
  }
}

const NEVER_INLINE: InlinePolicy = { recordThreadRun: () => false, allows: () => false, recordInlineRun: () => false };

function tensorsOf(rows: number, seed: number): Tensor[] {
  const values = (length: number): number[] => Array.from({ length }, (_, i) => (seed * 31 + i * 7) % 100);
  const n = rows * 3;
  const fixed: Array<[DataType, Tensor['data']]> = [
    ['BOOL', Uint8Array.from(values(n), (v) => v % 2)],
    ['UINT8', Uint8Array.from(values(n))],
    ['UINT16', Uint16Array.from(values(n))],
    ['UINT32', Uint32Array.from(values(n))],
    ['UINT64', BigUint64Array.from(values(n), (v) => BigInt(v) + 2n ** 60n)],
    ['INT8', Int8Array.from(values(n), (v) => v - 50)],
    ['INT16', Int16Array.from(values(n), (v) => v - 50)],
    ['INT32', Int32Array.from(values(n), (v) => v - 50)],
    ['INT64', BigInt64Array.from(values(n), (v) => BigInt(v) - 2n ** 60n)],
    ['FP16', Uint16Array.from(values(n), (v) => 0x3c00 + v)],
    ['FP32', Float32Array.from(values(n), (v) => v / 4)],
    ['FP64', Float64Array.from(values(n), (v) => v / 8)],
  ];
  const tensors: Tensor[] = fixed.map(([dataType, data]) => ({ name: `INPUT_${dataType}`, dataType, shape: [rows, 3], data }));
  tensors.push({ name: 'INPUT_BYTES', dataType: 'BYTES', shape: [rows, 3], data: values(n).map((v) => Buffer.from(`é${v}`) as Uint8Array) });
  return tensors;
}

const request = (rows: number, seed: number): InferRequest => ({ modelName: 'identity_all_types', id: '', inputs: tensorsOf(rows, seed), parameters: {} });

/** Each output as plain values, by input name, for comparing requests and instances. */
function plain(outputs: readonly Tensor[]): Record<string, { shape: readonly number[]; data: unknown[] }> {
  return Object.fromEntries(
    outputs.map((output) => [
      output.name.replace('OUTPUT_', 'INPUT_'),
      { shape: output.shape, data: Array.isArray(output.data) ? output.data.map((element) => Buffer.from(element).toString('utf8')) : Array.from(output.data as ArrayLike<unknown>) },
    ]),
  );
}

/** What an identity answers to `sent`, in plain()'s form. */
const expectedOf = (sent: InferRequest): ReturnType<typeof plain> =>
  Object.fromEntries(
    sent.inputs.map((input) => [input.name, { shape: input.shape, data: Array.isArray(input.data) ? input.data.map((e) => Buffer.from(e).toString('utf8')) : Array.from(input.data as ArrayLike<unknown>) }]),
  );

test('an instance running inline answers every data type as its execution thread does, alone and in a batch', async (t) => {
  const config = parseModelConfig(readFileSync(`${MODEL_DIR}/config.pbtxt`, 'utf8'), 'config.pbtxt');
  const spec = await loadModelSpec(config, 1, MODEL_DIR);
  const options = { spec, modelPath: `${MODEL_DIR}/1/model.onnx`, sessionOptions: sessionOptionsFromConfig(config, { instanceCount: 2, cpuCount: 2 }), logger: silentLogger };
  const policy = new AlwaysInline();
  const inline = await OrtInstance.start({ ...options, name: 'inline_0', inlinePolicy: policy });
  t.after(() => inline.close());
  const threaded = await OrtInstance.start({ ...options, name: 'threaded_0', inlinePolicy: NEVER_INLINE });
  t.after(() => threaded.close());

  // The first run is on the thread; it starts the main thread's session, which takes a moment to load.
  while (policy.inlineRuns === 0) {
    const first = await inline.execute([request(1, 0)]);
    assert.ok(Array.isArray(first.responses[0]), String(first.responses[0]));
    await sleep(10);
  }
  for (const batch of [[request(1, 1)], [request(2, 2), request(1, 3), request(3, 4)]]) {
    const before = policy.inlineRuns;
    const [fromInline, fromThread] = await Promise.all([inline.execute(batch), threaded.execute(batch)]);
    assert.equal(policy.inlineRuns, before + 1, 'the batch ran inline, as one run');
    for (const [index, sent] of batch.entries()) {
      const expected = expectedOf(sent);
      assert.deepEqual(plain(fromInline.responses[index] as Tensor[]), expected);
      assert.deepEqual(plain(fromThread.responses[index] as Tensor[]), expected);
    }
    assert.ok(fromInline.timing.inferNs > 0 && fromThread.timing.inferNs > 0);
  }
});

/** Sends the instance back to its thread after each inline run, and lets it run inline again after each thread run. */
class Flipping implements InlinePolicy {
  isInline = false;
  inlineRuns = 0;
  threadRuns = 0;
  recordThreadRun(): boolean {
    this.threadRuns++;
    this.isInline = true;
    return true;
  }
  allows(): boolean {
    return this.isInline;
  }
  recordInlineRun(): boolean {
    this.inlineRuns++;
    this.isInline = false;
    return false;
  }
}

test('an instance the guard sent back to its thread runs inline again, on the same main-thread session, once the guard lets it', async (t) => {
  const config = parseModelConfig(readFileSync(`${MODEL_DIR}/config.pbtxt`, 'utf8'), 'config.pbtxt');
  const spec = await loadModelSpec(config, 1, MODEL_DIR);
  const policy = new Flipping();
  const instance = await OrtInstance.start({
    spec,
    modelPath: `${MODEL_DIR}/1/model.onnx`,
    sessionOptions: sessionOptionsFromConfig(config, { instanceCount: 1, cpuCount: 2 }),
    logger: silentLogger,
    name: 'flipping_0',
    inlinePolicy: policy,
  });
  t.after(() => instance.close());
  while (policy.inlineRuns === 0) {
    await instance.execute([request(1, 0)]);
    await sleep(10);
  }
  const { threadRuns } = policy;
  for (let seed = 1; seed <= 4; seed++) {
    const sent = request(1, seed);
    const { responses } = await instance.execute([sent]);
    assert.deepEqual(plain(responses[0] as Tensor[]), expectedOf(sent));
  }
  assert.deepEqual({ inline: policy.inlineRuns, thread: policy.threadRuns - threadRuns }, { inline: 3, thread: 2 }, 'thread, inline, thread, inline');
});

test('behind a dynamic batcher an inline execution starts in the check phase, not in the call; without one, in the call', async (t) => {
  const config = parseModelConfig(readFileSync(`${MODEL_DIR}/config.pbtxt`, 'utf8'), 'config.pbtxt');
  const spec = await loadModelSpec(config, 1, MODEL_DIR);
  const options = { spec, modelPath: `${MODEL_DIR}/1/model.onnx`, sessionOptions: sessionOptionsFromConfig(config, { instanceCount: 2, cpuCount: 2 }), logger: silentLogger };
  for (const isFedByBatcher of [true, false]) {
    const policy = new AlwaysInline();
    const instance = await OrtInstance.start({ ...options, name: `inline_${isFedByBatcher}`, inlinePolicy: policy, isFedByBatcher });
    t.after(() => instance.close());
    while (policy.inlineRuns === 0) {
      await instance.execute([request(1, 0)]);
      await sleep(10);
    }
    const sent = request(2, 1);
    // Queued before the execution's own turn of the check phase: it sees whether the run came before.
    const runsAtCheckPhase = new Promise<number>((resolve) => setImmediate(() => resolve(policy.inlineRuns)));
    const executed = instance.execute([sent]);
    assert.equal(instance.canExecuteNow, false, 'busy until it has run');
    assert.equal(await runsAtCheckPhase, isFedByBatcher ? 1 : 2, `fed by a batcher: ${isFedByBatcher}`);
    assert.deepEqual(plain((await executed).responses[0] as Tensor[]), expectedOf(sent));
    assert.equal(policy.inlineRuns, 2);
  }
});

/** The shared memory addon, or why it cannot be used here (the tests are skipped then). */
function shmAddon(): ShmAddon | string {
  try {
    return loadShmAddon();
  } catch (error) {
    return `the shared memory addon did not load: ${(error as Error).message.split('\n', 1)[0]}`;
  }
}
const SHM_SKIP = typeof shmAddon() === 'string' ? (shmAddon() as string) : false;

/**
 * The fixed-size inputs of `requests` copied into one new shared memory object, one after the other
 * as a client writes them, and the requests again with those inputs as views of the addon's mapping.
 */
function inRegion(t: TestContext, addon: ShmAddon, requests: readonly InferRequest[]): { readonly requests: InferRequest[]; readonly mapping: ReturnType<ShmAddon['map']> } {
  const bytesOf = (data: Tensor['data']): Uint8Array => new Uint8Array((data as Uint8Array).buffer, (data as Uint8Array).byteOffset, (data as Uint8Array).byteLength);
  const offsets = new Map<Tensor, number>();
  let size = 0;
  for (const sent of requests) {
    for (const input of sent.inputs) {
      if (input.dataType === 'BYTES') continue;
      offsets.set(input, size);
      size = (size + bytesOf(input.data).byteLength + 7) & ~7;
    }
  }
  const key = `/nereid-ort-instance-test-${process.pid}-${offsets.size}`;
  const contents = new Uint8Array(size);
  for (const [input, offset] of offsets) contents.set(bytesOf(input.data), offset);
  writeFileSync(`/dev/shm${key}`, contents);
  t.after(() => rmSync(`/dev/shm${key}`, { force: true }));
  const mapping = addon.map(key, 0, size);
  trackMapping(mapping.buffer, mapping.address);
  const view = (input: Tensor): Tensor => {
    const offset = offsets.get(input);
    if (offset === undefined) return input;
    const Ctor = (input.data as Uint8Array).constructor as new (buffer: ArrayBuffer, offset: number, length: number) => Tensor['data'];
    return { ...input, data: new Ctor(mapping.buffer, offset, (input.data as ArrayLike<unknown>).length) };
  };
  return { requests: requests.map((sent) => ({ ...sent, inputs: sent.inputs.map(view) })), mapping };
}

/** One instance of the model in `dir` that always runs on its execution thread, closed after the test. */
async function threadedInstance(t: TestContext, dir: string, name: string): Promise<OrtInstance> {
  const config = parseModelConfig(readFileSync(`${dir}/config.pbtxt`, 'utf8'), 'config.pbtxt');
  const instance = await OrtInstance.start({
    spec: await loadModelSpec(config, 1, dir),
    modelPath: `${dir}/1/model.onnx`,
    sessionOptions: sessionOptionsFromConfig(config, { instanceCount: 1, cpuCount: 2 }),
    logger: silentLogger,
    name,
    inlinePolicy: NEVER_INLINE,
  });
  t.after(() => instance.close());
  return instance;
}

test('inputs of every fixed-size type in a mapped region reach the execution thread and come back as sent, alone and in a batch', { skip: SHM_SKIP }, async (t) => {
  const addon = shmAddon() as ShmAddon;
  const instance = await threadedInstance(t, MODEL_DIR, 'mapped_0');
  const sent = [request(2, 5), request(1, 6), request(3, 7)];
  const { requests, mapping } = inRegion(t, addon, sent);
  t.after(() => closeMapping(mapping.buffer, () => addon.unmap(mapping.buffer, mapping.handle)));
  const alone = await instance.execute([requests[1]!]);
  assert.deepEqual(plain(alone.responses[0] as Tensor[]), expectedOf(sent[1]!));
  const batch = await instance.execute(requests);
  for (const [index, sentRequest] of sent.entries()) assert.deepEqual(plain(batch.responses[index] as Tensor[]), expectedOf(sentRequest));
});

test('a region closed while a run reads it is unmapped once the execution thread is done with the run', { skip: SHM_SKIP }, async (t) => {
  const addon = shmAddon() as ShmAddon;
  // The slow model runs for about 100 ms: the thread cannot be done with it before `execute` returns.
  const instance = await threadedInstance(t, fileURLToPath(new URL('../../../test/fixtures/hot_path_repository/slow', import.meta.url)), 'slow_0');
  const sent: InferRequest = { modelName: 'slow', id: '', inputs: [{ name: 'INPUT0', dataType: 'FP32', shape: [1], data: Float32Array.of(3.5) }], parameters: {} };
  const { requests, mapping } = inRegion(t, addon, [sent]);
  let unmapped = 0;
  // A run without BYTES inputs is handed to the thread before `execute` returns, holding the mapping.
  const executed = instance.execute(requests);
  closeMapping(mapping.buffer, () => {
    unmapped++;
    addon.unmap(mapping.buffer, mapping.handle);
  });
  assert.equal(unmapped, 0, 'held by the run the thread has not finished');
  const { responses } = await executed;
  assert.equal(unmapped, 1, 'unmapped once the thread was done with it');
  assert.deepEqual(Array.from((responses[0] as Tensor[])[0]!.data as Float32Array), [3.5]);
});
