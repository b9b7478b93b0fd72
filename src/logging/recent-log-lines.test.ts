import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createLogger, isConfigurableLogger, silentLogger } from './logger.js';
import { RecentLogLines } from './recent-log-lines.js';

test('keeps the lines written about a model, newest last, within its capacity and the limit asked', () => {
  const recent = new RecentLogLines(3);
  const logger = recent.record(silentLogger);
  logger.info('repository', "loaded 'simple' version 1");
  logger.error('repository', "failed to load 'broken' version 1: no model file");
  logger.warning('repository', "unloading 'simple' version 1");
  logger.verbose(0, 'server', "infer for model 'simple'");
  logger.info('repository', "loaded 'simple' version 2");
  assert.deepEqual(recent.about('simple', 10).map((line) => [line.severity, line.message]), [
    ['W', "unloading 'simple' version 1"],
    ['I', "loaded 'simple' version 2"],
  ]);
  assert.deepEqual(recent.about('simple', 1).map((line) => line.message), ["loaded 'simple' version 2"]);
  assert.deepEqual(recent.about('broken', 10).map((line) => line.component), ['repository']);
  assert.deepEqual(recent.about('simpl', 10), []);
});

test('a configurable logger stays configurable, and lines it does not write are not kept', () => {
  const recent = new RecentLogLines();
  const logger = recent.record(createLogger({ info: false, warning: true, error: true, verboseLevel: 0, format: 'default', file: '/dev/null' }));
  assert.ok(isConfigurableLogger(logger));
  logger.info('repository', "loaded 'simple' version 1");
  logger.configure({ info: true });
  logger.info('repository', "loaded 'simple' version 2");
  assert.equal(logger.settings().info, true);
  assert.deepEqual(recent.about('simple', 10).map((line) => line.message), ["loaded 'simple' version 2"]);
});
