import assert from 'node:assert/strict';
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, test } from 'node:test';
import type { Logger } from '../../src/logging/logger.js';
import { type TestServer, startTestServer } from '../helpers/server.js';

const JS_REPOSITORY = fileURLToPath(new URL('../fixtures/js_repository', import.meta.url));
const HAS_REDIS = spawnSync('redis-server', ['--version']).status === 0;

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
    server.once('error', reject);
  });
}

/** A throwaway Redis on 127.0.0.1 that keeps nothing on disk; resolves once it accepts connections. */
async function startRedis(port: number): Promise<ChildProcess> {
  const redis = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: ['ignore', 'pipe', 'inherit'] });
  let output = '';
  await new Promise<void>((resolve, reject) => {
    redis.stdout!.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes('Ready to accept connections')) resolve();
    });
    redis.once('exit', () => reject(new Error(`redis-server exited:\n${output}`)));
  });
  return redis;
}

const addRequest = (base: number) => ({
  inputs: ['INPUT0', 'INPUT1'].map((name) => ({ name, datatype: 'FP32', shape: [1, 4], data: name === 'INPUT0' ? [base, base + 1, base + 2, base + 3] : [1, 1, 1, 1] })),
});

async function infer(server: TestServer, base: number): Promise<number[]> {
  const response = await server.post('/v2/models/cached_adder/infer', addRequest(base));
  const json = (await response.json()) as { outputs: Array<{ name: string; data: number[] }>; error?: string };
  assert.equal(response.status, 200, json.error);
  return json.outputs.find((output) => output.name === 'OUTPUT0')!.data;
}

async function counts(server: TestServer): Promise<{ hits: number; misses: number; executions: number }> {
  const stats = (await (await server.get('/v2/models/cached_adder/stats')).json()) as {
    model_stats: Array<{ execution_count: number; inference_stats: Record<'cache_hit' | 'cache_miss', { count: number }> }>;
  };
  const [model] = stats.model_stats;
  return { hits: model!.inference_stats.cache_hit.count, misses: model!.inference_stats.cache_miss.count, executions: model!.execution_count };
}

describe('the redis cache (--cache-config redis,host=H --cache-config redis,port=P)', { skip: HAS_REDIS ? false : 'redis-server is not installed' }, () => {
  let repository: string;
  let redis: ChildProcess;
  let port: number;
  before(async () => {
    repository = await mkdtemp(join(tmpdir(), 'nereid-redis-'));
    const add = join(JS_REPOSITORY, 'js_add');
    await cp(add, join(repository, 'cached_adder'), { recursive: true });
    await writeFile(join(repository, 'cached_adder', 'config.pbtxt'), `${await readFile(join(add, 'config.pbtxt'), 'utf8')}\nresponse_cache { enable: true }\n`);
    port = await freePort();
    redis = await startRedis(port);
  });
  after(async () => {
    if (redis.exitCode === null) {
      redis.kill('SIGTERM');
      await once(redis, 'exit');
    }
    await rm(repository, { recursive: true, force: true });
  });

  test('two servers share the cache: what one stored the other answers without executing; with Redis gone both still serve', async () => {
    const errors: string[] = [];
    const logger: Logger = { info() {}, verbose() {}, warning() {}, error: (_component, message) => void errors.push(message) };
    const redisCache = { host: '127.0.0.1', port };
    const first = await startTestServer({ modelRepositories: [repository], redisCache });
    const second = await startTestServer({ modelRepositories: [repository], redisCache, logger });
    try {
      assert.deepEqual(await infer(first, 10), [11, 12, 13, 14]);
      assert.deepEqual(await infer(first, 10), [11, 12, 13, 14]);
      assert.deepEqual(await counts(first), { hits: 1, misses: 1, executions: 1 });
      assert.deepEqual(await infer(second, 10), [11, 12, 13, 14]);
      assert.deepEqual(await counts(second), { hits: 1, misses: 0, executions: 0 });

      redis.kill('SIGTERM');
      await once(redis, 'exit');
      for (let i = 0; i < 2; i++) assert.deepEqual(await infer(second, 20), [21, 22, 23, 24]);
      assert.deepEqual(await counts(second), { hits: 1, misses: 2, executions: 2 });
      const outage = errors.filter((message) => message.includes(`the redis cache at 127.0.0.1:${port} cannot be reached`));
      assert.equal(outage.length, 1, errors.join('\n'));
      assert.match(outage[0]!, /requests are served without the cache until it can$/);
    } finally {
      await first.close();
      await second.close();
    }
  });
});
