import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { credentials } from '@grpc/grpc-js';
import { loadGrpcServices } from '../helpers/plain-grpc-clients.js';
import { createLogger } from '../../src/logging/logger.js';
import { EXAMPLES, type TestServer, startTestServer } from '../helpers/server.js';

const simpleRequest = {
  inputs: [
    { name: 'INPUT0', shape: [1, 16], datatype: 'INT32', data: Array(16).fill(1) },
    { name: 'INPUT1', shape: [1, 16], datatype: 'INT32', data: Array(16).fill(1) },
  ],
};

describe('the logging extension', () => {
  let server: TestServer;
  const logFile = join(mkdtempSync(join(tmpdir(), 'nereid-log-')), 'server.log');
  before(async () => {
    const logger = createLogger({ info: true, warning: true, error: true, verboseLevel: 0, format: 'default', file: logFile });
    server = await startTestServer({ modelRepositories: [EXAMPLES], logger });
  });
  after(() => server.close());

  test('GET /v2/logging reads the settings; POST changes those it names and they take effect', async () => {
    assert.deepEqual(await (await server.get('/v2/logging')).json(), {
      log_file: logFile,
      log_info: true,
      log_warning: true,
      log_error: true,
      log_verbose_level: 0,
      log_format: 'default',
    });
    await server.post('/v2/models/simple/infer', simpleRequest);
    assert.doesNotMatch(readFileSync(logFile, 'utf8'), /infer for model 'simple'/);
    const updated = await server.post('/v2/logging', { log_verbose_level: 1, log_format: 'ISO8601' });
    assert.equal(updated.status, 200);
    assert.equal(((await updated.json()) as { log_verbose_level: number }).log_verbose_level, 1);
    await server.post('/v2/models/simple/infer', { ...simpleRequest, id: 'traced' });
    assert.match(readFileSync(logFile, 'utf8'), /^\d{4}-\d\d-\d\dT[\d:.]+Z I \d+ server\] \[request id: traced\] infer for model 'simple'$/m);
  });

  test('unknown settings and wrong types are clear errors', async () => {
    const unknown = await server.post('/v2/logging', { log_colour: true });
    assert.equal(unknown.status, 400);
    assert.deepEqual(await unknown.json(), {
      error: "unknown log setting 'log_colour'; the settings are log_file, log_info, log_warning, log_error, log_verbose_level, log_format",
    });
    const wrong = await server.post('/v2/logging', { log_info: 'yes' });
    assert.equal(wrong.status, 400);
    assert.deepEqual(await wrong.json(), { error: `log setting 'log_info' must be true or false, got "yes"` });
  });

  test('gRPC LogSettings reads and changes the same settings', async () => {
    const Client = loadGrpcServices().inference;
    const client = new Client(server.grpcUrl!, credentials.createInsecure()) as unknown as {
      LogSettings: (request: object, callback: (error: Error | null, response: { settings: Record<string, Record<string, unknown>> }) => void) => void;
      close(): void;
    };
    try {
      const response = await new Promise<{ settings: Record<string, Record<string, unknown>> }>((resolve, reject) =>
        client.LogSettings({ settings: { log_warning: { bool_param: false } } }, (error, reply) => (error !== null ? reject(error) : resolve(reply))),
      );
      assert.equal(response.settings.log_warning!.bool_param, false);
      assert.equal(response.settings.log_verbose_level!.uint32_param, 1);
      assert.equal(response.settings.log_file!.string_param, logFile);
      assert.equal(((await (await server.get('/v2/logging')).json()) as { log_warning: boolean }).log_warning, false);
    } finally {
      client.close();
    }
  });
});
