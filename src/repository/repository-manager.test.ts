import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import type { ModelCaller } from '../kernel/model-caller.js';
import { type Logger, silentLogger } from '../logging/logger.js';
import type { Clock } from '../scheduling/clock.js';
import { LOAD_RETRY_BACKOFF_MS } from './load-failure-backoff.js';
import { RepositoryManager } from './repository-manager.js';

test('a failed load on demand is not retried by the requests that follow it until the backoff ends', async (t) => {
  const repositoryPath = mkdtempSync(join(tmpdir(), 'nereid-backoff-'));
  t.after(() => rmSync(repositoryPath, { recursive: true, force: true }));
  mkdirSync(join(repositoryPath, 'broken', '1'), { recursive: true });
  writeFileSync(join(repositoryPath, 'broken', 'config.pbtxt'), 'name: "broken"\nplatform: "onnxruntime_onnx"\nmax_batch_size: "eight"\n');
  let nowUs = 1_000_000;
  const clock: Clock = { nowUs: () => nowUs, setTimer: () => undefined, clearTimer: () => {} };
  const loads: string[] = [];
  const logger: Logger = { ...silentLogger, info: (_category, message) => void (message.startsWith("loading 'broken' on demand") && loads.push(message)) };
  const repository = new RepositoryManager({
    repositoryPaths: [repositoryPath],
    controlMode: 'none',
    startupModels: [],
    unloadTimeoutMs: 1000,
    loadTimeoutMs: 60_000,
    maxInputBytes: 2 ** 26,
    isAutoCompleteEnabled: true,
    isLoadOnDemand: true,
    clock,
    context: { logger: silentLogger, defaultMaxBatchSize: 4, cpuCount: 2, caller: {} as ModelCaller },
    logger,
  });
  await repository.loadAll();
  const reasonOf = (name: string): Promise<string> =>
    repository.prepareModel(name).then(
      () => 'loaded',
      (error: Error) => error.message,
    );

  // Eight clients at once share one load; the requests after its failure get its reason without another.
  const first = await Promise.all(Array.from({ length: 8 }, () => reasonOf('broken')));
  const after = await Promise.all(Array.from({ length: 8 }, () => reasonOf('broken')));
  nowUs += (LOAD_RETRY_BACKOFF_MS - 1) * 1000;
  const late = await reasonOf('broken');
  assert.match(first[0]!, /^load failed for model 'broken': .*max_batch_size/);
  assert.deepEqual([...first, ...after, late], Array(17).fill(first[0]));
  assert.equal(loads.length, 1);

  nowUs += 1000;
  assert.equal(await reasonOf('broken'), first[0]);
  assert.equal(loads.length, 2, 'once the backoff has passed, the next request loads again');
  await repository.unloadAll();
});
