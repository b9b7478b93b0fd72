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

/** A throwaway Redis on 127.0.0.1 that keeps nothing on disk (extra arguments: e.g. --requirepass); resolves once it accepts connections. */
async function startRedis(port: number, ...extra: string[]): Promise<ChildProcess> {
  const redis = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', ...extra], { stdio: ['ignore', 'pipe', 'inherit'] });
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

/** The message startServer rejects with, or 'started' (the server then closed). */
async function startFailure(options: Parameters<typeof startTestServer>[0]): Promise<string> {
  try {
    await (await startTestServer(options)).close();
    return 'started';
  } catch (error) {
    return (error as Error).message;
  }
}

async function stopRedis(redis: ChildProcess): Promise<void> {
  if (redis.exitCode !== null) return;
  redis.kill('SIGTERM');
  await once(redis, 'exit');
}

// Triton's qa/L0_response_cache: a redis cache that cannot be used fails the server's start.
describe('the redis cache at start-up', { skip: HAS_REDIS ? false : 'redis-server is not installed' }, () => {
  let repository: string;
  before(async () => {
    repository = await mkdtemp(join(tmpdir(), 'nereid-redis-'));
  });
  after(() => rm(repository, { recursive: true, force: true }));

  test('nothing listening: the start fails with Triton\'s reason (port=nonexistent is port 0, read as Triton reads it)', async () => {
    assert.equal(
      await startFailure({ modelRepositories: [repository], redisCache: { host: 'localhost', port: 0 } }),
      'Failed to initialize RedisCache: failed to connect to Redis (localhost:0): Connection refused',
    );
  });

  test('an unknown host: the start fails with the resolver\'s reason', async () => {
    const message = await startFailure({ modelRepositories: [repository], redisCache: { host: 'nonexistent.invalid', port: 0 } });
    const reasons = ['Name or service not known', 'Temporary failure in name resolution'];
    assert.ok(
      reasons.some((reason) => message === `Failed to initialize RedisCache: failed to connect to Redis (nonexistent.invalid:0): ${reason}`),
      message,
    );
  });

  describe('with a password (--requirepass)', () => {
    const PASSWORD = 'redis123!';
    let redis: ChildProcess;
    let port: number;
    before(async () => {
      port = await freePort();
      redis = await startRedis(port, '--requirepass', PASSWORD);
    });
    after(() => stopRedis(redis));

    const withEnv = async <T>(env: Record<string, string>, run: () => Promise<T>): Promise<T> => {
      Object.assign(process.env, env);
      try {
        return await run();
      } finally {
        for (const name of Object.keys(env)) delete process.env[name];
      }
    };

    test('the right password starts; a wrong one or none fails with Redis\'s reply', async () => {
      const redisCache = { host: '127.0.0.1', port };
      assert.deepEqual(
        [
          await startFailure({ modelRepositories: [repository], redisCache: { ...redisCache, password: PASSWORD } }),
          await startFailure({ modelRepositories: [repository], redisCache: { ...redisCache, user: 'default', password: PASSWORD } }),
          await startFailure({ modelRepositories: [repository], redisCache: { ...redisCache, password: 'wrong' } }),
          await startFailure({ modelRepositories: [repository], redisCache }),
        ],
        [
          'started',
          'started',
          'Failed to initialize RedisCache: WRONGPASS invalid username-password pair or user is disabled.',
          'Failed to initialize RedisCache: NOAUTH Authentication required.',
        ],
      );
    });

    test('TRITONCACHE_REDIS_PASSWORD and TRITONCACHE_REDIS_USERNAME authenticate as the flags do', async () => {
      const redisCache = { host: '127.0.0.1', port };
      const start = (): Promise<string> => startFailure({ modelRepositories: [repository], redisCache });
      assert.deepEqual(
        [
          await withEnv({ TRITONCACHE_REDIS_PASSWORD: PASSWORD }, start),
          await withEnv({ TRITONCACHE_REDIS_USERNAME: 'default', TRITONCACHE_REDIS_PASSWORD: PASSWORD }, start),
          await withEnv({ TRITONCACHE_REDIS_PASSWORD: 'wrong' }, start),
        ],
        ['started', 'started', 'Failed to initialize RedisCache: WRONGPASS invalid username-password pair or user is disabled.'],
      );
    });
  });
});
