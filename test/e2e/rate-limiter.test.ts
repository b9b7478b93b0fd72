import assert from 'node:assert/strict';
import { cp, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, test } from 'node:test';
import { type TestServer, startTestServer } from '../helpers/server.js';

const JS_REPOSITORY = fileURLToPath(new URL('../fixtures/js_repository', import.meta.url));

/** Group settings of each copy of js_timer (a 300 ms wait that reports its start and end). */
const GROUPS: Record<string, string> = {
  first: 'instance_group [ { count: 1 kind: KIND_CPU rate_limiter { resources [ { name: "R" global: true count: 1 } ] priority: 1 } } ]',
  second: 'instance_group [ { count: 1 kind: KIND_CPU rate_limiter { resources [ { name: "R" global: true count: 1 } ] priority: 2 } } ]',
  greedy: 'instance_group [ { count: 1 kind: KIND_CPU rate_limiter { resources [ { name: "R" global: true count: 2 } ] } } ]',
};

async function makeRepository(): Promise<string> {
  const root = await mkdtemp(join(tmpdir(), 'nereid-rate-limit-'));
  const timer = join(JS_REPOSITORY, 'js_timer');
  const config = (await readFile(join(timer, 'config.pbtxt'), 'utf8')).replace(/instance_group.*\n/, '');
  for (const [name, group] of Object.entries(GROUPS)) {
    await cp(timer, join(root, name), { recursive: true });
    await writeFile(join(root, name, 'config.pbtxt'), `${config}\n${group}\n`);
  }
  return root;
}

interface Execution {
  readonly model: string;
  readonly startMs: number;
  readonly endMs: number;
}

async function run(server: TestServer, model: string): Promise<Execution> {
  const response = await server.post(`/v2/models/${model}/infer`, { inputs: [{ name: 'X', datatype: 'FP32', shape: [1], data: [0] }] });
  const json = (await response.json()) as { outputs: Array<{ name: string; data: number[] }>; error?: string };
  assert.equal(response.status, 200, json.error);
  const value = (name: string): number => json.outputs.find((output) => output.name === name)!.data[0]!;
  return { model, startMs: value('START'), endMs: value('END') };
}

interface Stat {
  inference_stats: Record<'queue' | 'compute_infer', { count: number; ns: number }>;
}

describe('the rate limiter (--rate-limit=execution_count)', () => {
  let repository: string;
  before(async () => {
    repository = await makeRepository();
  });
  after(() => rm(repository, { recursive: true, force: true }));

  describe('with one R declared (--rate-limit-resource=R:1)', () => {
    let server: TestServer;
    before(async () => {
      server = await startTestServer({ modelRepositories: [repository], rateLimit: 'execution_count', rateLimitResources: [{ name: 'R', count: 1 }] });
    });
    after(() => server.close());

    test("a model asking for more R than declared fails to load with Triton's message", async () => {
      const index = (await (await server.post('/v2/repository/index', '')).json()) as Array<{ name: string; state: string; reason?: string }>;
      assert.deepEqual(
        index.find((entry) => entry.name === 'greedy'),
        {
          name: 'greedy',
          version: '1',
          state: 'UNAVAILABLE',
          reason: 'Resource count for "R" is limited to 1 which will prevent scheduling of one or more model instances, the minimum required count is 2',
        },
      );
      assert.deepEqual(
        index.filter((entry) => entry.state === 'READY').map((entry) => entry.name),
        ['first', 'second'],
      );
    });

    test('two models sharing R never execute at once; priority 2 gets half the turns of priority 1; the wait is queue time', async () => {
      const executions = await Promise.all([...Array.from({ length: 6 }, () => run(server, 'first')), ...Array.from({ length: 6 }, () => run(server, 'second'))]);
      executions.sort((a, b) => a.startMs - b.startMs);
      for (let i = 1; i < executions.length; i++) {
        assert.ok(executions[i]!.startMs >= executions[i - 1]!.endMs, `execution ${i} (${executions[i]!.model}) started before ${executions[i - 1]!.model}'s ended`);
      }
      // While both have requests waiting, first (priority 1) runs twice for each turn of second (priority 2).
      const firstNine = executions.slice(0, 9).map((execution) => execution.model);
      assert.deepEqual(
        { first: firstNine.filter((model) => model === 'first').length, second: firstNine.filter((model) => model === 'second').length },
        { first: 6, second: 3 },
        firstNine.join(' '),
      );
      const second = ((await (await server.get('/v2/models/second/stats')).json()) as { model_stats: Stat[] }).model_stats[0]!;
      assert.equal(second.inference_stats.queue.count, 6);
      // Its requests waited for up to eleven 300 ms executions and each computed for one.
      assert.ok(second.inference_stats.queue.ns > second.inference_stats.compute_infer.ns, JSON.stringify(second.inference_stats));
    });
  });

  test('with --rate-limit off (the default) the same models execute at once, and greedy loads', async () => {
    const server = await startTestServer({ modelRepositories: [repository], rateLimitResources: [{ name: 'R', count: 1 }] });
    try {
      const [first, second] = await Promise.all([run(server, 'first'), run(server, 'second')]);
      assert.ok(second!.startMs < first!.endMs && first!.startMs < second!.endMs, JSON.stringify([first, second]));
      assert.equal((await server.get('/v2/models/greedy/ready')).status, 200);
    } finally {
      await server.close();
    }
  });
});

/**
 * qa/L0_rate_limiter's dynamic batching case, with shorter delays: custom_zero_1_float32 (the identity
 * backend) in two instance groups whose resources only one can hold at a time, preferred batch sizes 1
 * to 4, and TRITONSERVER_DELAY_SCHEDULER=8. Whichever instance waits for the resources takes a full
 * batch when it gets them, since the requests that came meanwhile join its batch.
 */
const ZERO_CONFIG = `name: "zero"
backend: "identity"
max_batch_size: 4
input [ { name: "INPUT0" data_type: TYPE_FP32 dims: [ -1 ] } ]
output [ { name: "OUTPUT0" data_type: TYPE_FP32 dims: [ -1 ] } ]
instance_group [ { kind: KIND_CPU count: 1 rate_limiter { resources [ { name: "resource1" count: 4 } ] } } ]
instance_group [ { kind: KIND_CPU count: 1 rate_limiter { resources [ { name: "resource1" count: 2 }, { name: "resource2" global: true count: 2 } ] priority: 2 } } ]
parameters [ { key: "execute_delay_ms" value: { string_value: "300" } } ]
dynamic_batching { preferred_batch_size: [ 1, 2, 3, 4 ] max_queue_delay_microseconds: 5000000 }
`;

test('with the rate limiter, a batch waiting for resources grows to full while they are held (qa/L0_rate_limiter, dynamic batching)', async () => {
  const root = await mkdtemp(join(tmpdir(), 'nereid-rate-limit-batching-'));
  await mkdir(join(root, 'zero', '1'), { recursive: true });
  await writeFile(join(root, 'zero', 'config.pbtxt'), ZERO_CONFIG);
  process.env.TRITONSERVER_DELAY_SCHEDULER = '8';
  let server: TestServer;
  try {
    server = await startTestServer({ modelRepositories: [root], rateLimit: 'execution_count' });
  } finally {
    delete process.env.TRITONSERVER_DELAY_SCHEDULER;
  }
  try {
    // As the QA client: 24 requests, one every 20 ms, never more than 8 waiting for their answer.
    const count = 24;
    const maxInflight = 8;
    let inflight = 0;
    let wake = (): void => {};
    const answers: Array<Promise<number[]>> = [];
    for (let index = 0; index < count; index++) {
      while (inflight >= maxInflight) await new Promise<void>((resolve) => (wake = resolve));
      inflight++;
      const answer = server.post('/v2/models/zero/infer', { inputs: [{ name: 'INPUT0', datatype: 'FP32', shape: [1, 1], data: [index] }] }).then(async (response) => {
        const json = (await response.json()) as { outputs?: Array<{ data: number[] }>; error?: string };
        inflight--;
        wake();
        assert.equal(response.status, 200, json.error);
        return json.outputs![0]!.data;
      });
      answers.push(answer);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    assert.deepEqual(await Promise.all(answers), Array.from({ length: count }, (_, index) => [index]));
    const stats = (await (await server.get('/v2/models/zero/stats')).json()) as { model_stats: Array<{ batch_stats: Array<{ batch_size: number; compute_infer: { count: number } }> }> };
    assert.deepEqual(
      stats.model_stats[0]!.batch_stats.map((batch) => [batch.batch_size, batch.compute_infer.count]),
      [[4, count / 4]],
    );
  } finally {
    await server.close();
    await rm(root, { recursive: true, force: true });
  }
});

