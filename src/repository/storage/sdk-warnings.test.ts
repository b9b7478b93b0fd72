import assert from 'node:assert/strict';
import { once } from 'node:events';
import { test } from 'node:test';
import type { Logger } from '../../logging/logger.js';
import { withSdkWarningsLogged } from './sdk-warnings.js';

function recordingLogger(): Logger & { readonly infos: string[] } {
  const infos: string[] = [];
  return { infos, verbose() {}, warning() {}, error() {}, info: (_component, message) => infos.push(message) };
}

/** The warnings Node emitted while `run` ran, and the events a tick later. */
async function warningsDuring(run: () => void): Promise<string[]> {
  const seen: string[] = [];
  const listener = (warning: Error): number => seen.push(warning.message);
  process.on('warning', listener);
  try {
    run();
    await new Promise((resolve) => setImmediate(resolve));
  } finally {
    process.off('warning', listener);
  }
  return seen;
}

test("the AWS SDK's Node version notice goes to the log on one line; other warnings pass through; emitWarning is restored", async () => {
  const logger = recordingLogger();
  const emitWarning = process.emitWarning;
  const passed = once(process, 'warning');
  const seen = await warningsDuring(() => {
    const built = withSdkWarningsLogged(() => {
      process.emitWarning('NodeVersionSupportWarning: The AWS SDK for JavaScript (v3)\nversions published after the first week of January 2027\nwill require node >=22.');
      process.emitWarning('another warning', 'OtherWarning');
      return 42;
    }, logger);
    assert.equal(built, 42);
  });
  await passed;
  assert.deepEqual(logger.infos, ['AWS SDK: NodeVersionSupportWarning: The AWS SDK for JavaScript (v3) versions published after the first week of January 2027 will require node >=22.']);
  assert.deepEqual(seen, ['another warning']);
  assert.equal(process.emitWarning, emitWarning);
});

test('emitWarning is restored when the constructor throws', () => {
  const emitWarning = process.emitWarning;
  assert.throws(
    () =>
      withSdkWarningsLogged(() => {
        throw new Error('bad options');
      }, recordingLogger()),
    /bad options/,
  );
  assert.equal(process.emitWarning, emitWarning);
});

test('a real S3Client: on Node before 22 its notice is one info line and no Node warning', async () => {
  const { S3Client } = await import('@aws-sdk/client-s3');
  const logger = recordingLogger();
  const seen = await warningsDuring(() => withSdkWarningsLogged(() => new S3Client({ region: 'us-east-1' }), logger).destroy());
  const isNoticed = Number(process.versions.node.split('.')[0]) < 22 && process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED !== 'true';
  assert.deepEqual(seen, []);
  assert.equal(logger.infos.length, isNoticed ? 1 : 0);
  if (isNoticed) assert.match(logger.infos[0]!, new RegExp(`^AWS SDK: NodeVersionSupportWarning: .* You are running node ${process.version.replace(/\./g, '\\.')}\\. `));
});
