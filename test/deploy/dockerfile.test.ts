import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { DEFAULT_SERVER_OPTIONS, parseServeArgs } from '../../src/config/server-options.js';
import { matchRoute } from '../../src/frontends/http/routes.js';

/**
 * No Docker engine runs here, so the Dockerfile is checked for what can go wrong without one: a copied
 * file that is missing or kept out by .dockerignore, an npm script that is gone, a flag the server no
 * longer takes, a port or a health path that moved.
 */
const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const read = (path: string): string => readFileSync(ROOT + path, 'utf8');

/** A Dockerfile's instructions, continuation lines joined, comments dropped. */
function instructions(dockerfile = 'Dockerfile'): Array<{ keyword: string; args: string }> {
  const text = read(dockerfile).replace(/\\\n/g, ' ');
  return text
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '' && !line.startsWith('#'))
    .map((line) => {
      const [keyword = '', ...rest] = line.split(/\s+/);
      return { keyword: keyword.toUpperCase(), args: rest.join(' ') };
    });
}
const of = (keyword: string, dockerfile = 'Dockerfile'): string[] =>
  instructions(dockerfile)
    .filter((entry) => entry.keyword === keyword)
    .map((entry) => entry.args);
const patterns = read('.dockerignore').split('\n').map((line) => line.trim()).filter((line) => line !== '' && !line.startsWith('#'));
/** Whether .dockerignore keeps a path out of the build context: a pattern covers it and no later `!` exception takes it back. */
const isIgnored = (source: string): boolean =>
  patterns.reduce((ignored, pattern) => {
    const isException = pattern.startsWith('!');
    const path = isException ? pattern.slice(1) : pattern;
    return source === path || source.startsWith(`${path}/`) ? !isException : ignored;
  }, false);
/** The sources a Dockerfile copies from the build context. */
const copiedSources = (dockerfile: string): string[] =>
  of('COPY', dockerfile)
    .filter((args) => !args.startsWith('--from='))
    .flatMap((args) => args.split(/\s+/).filter((word) => !word.startsWith('--')).slice(0, -1));

test('every file the build context copies exists and is not kept out by .dockerignore', () => {
  const sources = [...copiedSources('Dockerfile'), ...copiedSources('deploy/sagemaker/Dockerfile')];
  assert.ok(sources.length >= 7);
  for (const source of sources) {
    assert.ok(existsSync(ROOT + source), `COPY ${source}: no such file`);
    assert.ok(!isIgnored(source), `COPY ${source}: .dockerignore keeps it out`);
  }
  assert.ok(isIgnored('deploy/kubernetes'), 'the rest of deploy/ stays out');
});

test("the SageMaker image runs its entry script as SageMaker runs it, and its health check asks SageMaker's port", () => {
  const sageMaker = 'deploy/sagemaker/Dockerfile';
  assert.deepEqual(JSON.parse(of('ENTRYPOINT', sageMaker)[0]!), ['/usr/bin/tini', '--']);
  assert.deepEqual(JSON.parse(of('CMD', sageMaker)[0]!), ['serve']);
  assert.match(of('COPY', sageMaker)[0]!, /deploy\/sagemaker\/serve \/usr\/local\/bin\/serve$/);
  assert.match(of('ENV', sageMaker)[0]!, /NEREID_COMMAND="node \/app\/dist\/cli\/main\.js"/);
  assert.deepEqual(of('EXPOSE', sageMaker), ['8080']);
  const options = parseServeArgs(['--model-repository=/opt/ml/model', '--allow-sagemaker=true', '--allow-http=false'], {});
  assert.ok(options !== 'help');
  assert.equal(options.sageMaker?.port, 8080);
  assert.match(of('HEALTHCHECK', sageMaker)[0]!, /http:\/\/127\.0\.0\.1:8080\/ping/);
});

test('the npm scripts it runs exist, and the stages install what they need', () => {
  const scripts = (JSON.parse(read('package.json')) as { scripts: Record<string, string> }).scripts;
  const runs = of('RUN').join('\n');
  for (const [, script] of runs.matchAll(/npm run ([\w:-]+)/g)) assert.ok(scripts[script!] !== undefined, `npm run ${script}: no such script`);
  assert.match(runs, /npm ci --omit=dev --ignore-scripts/, 'the image holds production dependencies only');
  assert.deepEqual(of('FROM').map((args) => args.split(' ')[0]), ['node:20-slim', 'node:20-slim', 'node:20-slim']);
  assert.deepEqual(of('USER'), ['node']);
});

test('the entry point is the built CLI, and its flags are flags the server takes', () => {
  const entrypoint = JSON.parse(of('ENTRYPOINT')[0]!) as string[];
  const command = JSON.parse(of('CMD')[0]!) as string[];
  assert.deepEqual(entrypoint, ['/usr/bin/tini', '--', 'node', 'dist/cli/main.js']);
  assert.ok(existsSync(`${ROOT}src/cli/main.ts`), 'dist/cli/main.js is built from src/cli/main.ts');
  assert.equal(command[0], 'serve');
  const options = parseServeArgs(command.slice(1));
  assert.ok(options !== 'help');
  assert.deepEqual(options.modelRepositories, ['/models']);
});

test('it exposes the default ports, and its health check asks a real route', () => {
  assert.deepEqual(of('EXPOSE'), [[DEFAULT_SERVER_OPTIONS.httpPort, DEFAULT_SERVER_OPTIONS.grpcPort, DEFAULT_SERVER_OPTIONS.metricsPort].join(' ')]);
  const healthcheck = of('HEALTHCHECK')[0]!;
  const url = /http:\/\/127\.0\.0\.1:(\d+)(\/[\w/]+)/.exec(healthcheck);
  assert.ok(url !== null, healthcheck);
  assert.equal(Number(url[1]), DEFAULT_SERVER_OPTIONS.httpPort);
  assert.deepEqual(matchRoute('GET', url[2]!), { kind: 'health', check: 'ready' });
});
