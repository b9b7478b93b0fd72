import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { credentials } from '@grpc/grpc-js';
import { loadGrpcServices } from '../helpers/plain-grpc-clients.js';
import { LOG_FILE_UPDATE_REFUSED } from '../../src/core/log-settings.js';
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

type LogSettingsClient = {
  LogSettings: (request: object, callback: (error: (Error & { code: number; details: string }) | null, response: unknown) => void) => void;
  close(): void;
};

function grpcLogSettings(grpcUrl: string, settings: object): Promise<unknown> {
  const Client = loadGrpcServices().inference;
  const client = new Client(grpcUrl, credentials.createInsecure()) as unknown as LogSettingsClient;
  return new Promise<unknown>((resolve, reject) =>
    client.LogSettings({ settings }, (error, reply) => {
      client.close();
      if (error !== null) reject(error);
      else resolve(reply);
    }),
  );
}

/** Infers on 'simple' and checks that the server answered. */
async function assertServing(server: TestServer, id = 'still-serving'): Promise<void> {
  const response = await server.post('/v2/models/simple/infer', { ...simpleRequest, id });
  assert.equal(response.status, 200);
  assert.equal(((await response.json()) as { id: string }).id, id);
  assert.equal((await server.get('/v2/health/ready')).status, 200);
}

describe('issue 24: the logging API cannot point the log at a file of its choosing', () => {
  const folder = mkdtempSync(join(tmpdir(), 'nereid-log-'));
  const logFile = join(folder, 'server.log');
  const victim = join(folder, 'victim.txt');
  let server: TestServer;
  before(async () => {
    writeFileSync(victim, 'untouched\n');
    server = await startTestServer({ modelRepositories: [EXAMPLES], logger: createLogger({ info: true, warning: true, error: true, verboseLevel: 1, format: 'default', file: logFile }) });
  });
  after(() => server.close());

  test("HTTP: a log_file change is refused with Triton's status and text, and nothing of the request applies", async () => {
    const response = await server.post('/v2/logging', { log_file: victim, log_info: false });
    assert.equal(response.status, 501);
    assert.deepEqual(await response.json(), { error: LOG_FILE_UPDATE_REFUSED });
    assert.equal(LOG_FILE_UPDATE_REFUSED, 'log file location can not be updated through network protocol; start the server with --allow-log-file-update=true to allow it');
    const settings = (await (await server.get('/v2/logging')).json()) as { log_file: string; log_info: boolean };
    assert.deepEqual([settings.log_file, settings.log_info], [logFile, true]);
    await assertServing(server);
    assert.equal(readFileSync(victim, 'utf8'), 'untouched\n');
  });

  test("gRPC: a LogSettings log_file change is refused with Triton's status and text", async () => {
    await assert.rejects(grpcLogSettings(server.grpcUrl!, { log_file: { string_param: victim } }), { code: 12, details: LOG_FILE_UPDATE_REFUSED });
    assert.equal(((await (await server.get('/v2/logging')).json()) as { log_file: string }).log_file, logFile);
  });

  test('a request id with a newline is logged as one line, escaped', async () => {
    const forged = 'x\nE1201 00:00:00.000000 1 server] forged line';
    await assertServing(server, forged);
    const log = readFileSync(logFile, 'utf8');
    assert.doesNotMatch(log, /^E1201 00:00:00\.000000 1 server\] forged line/m);
    assert.match(log, /^I\d{4} [\d:.]+ \d+ server\] \[request id: x\\nE1201 00:00:00\.000000 1 server\] forged line\] infer for model 'simple'$/m);
  });
});

describe('issue 24: with --allow-log-file-update, the log file can move, and one that cannot be written never stops the server', () => {
  const folder = mkdtempSync(join(tmpdir(), 'nereid-log-'));
  let server: TestServer;
  before(async () => {
    server = await startTestServer({
      modelRepositories: [EXAMPLES],
      isLogFileUpdateAllowed: true,
      logger: createLogger({ info: true, warning: true, error: true, verboseLevel: 1, format: 'default', file: join(folder, 'first.log') }),
    });
  });
  after(() => server.close());

  test('HTTP and gRPC move the log to the file they name', async () => {
    const moved = join(folder, 'moved.log');
    const response = await server.post('/v2/logging', { log_file: moved });
    assert.equal(response.status, 200);
    assert.equal(((await response.json()) as { log_file: string }).log_file, moved);
    await assertServing(server, 'after-move');
    assert.match(readFileSync(moved, 'utf8'), /\[request id: after-move\] infer for model 'simple'$/m);
    const viaGrpc = join(folder, 'grpc.log');
    await grpcLogSettings(server.grpcUrl!, { log_file: { string_param: viaGrpc } });
    await assertServing(server, 'after-grpc-move');
    assert.match(readFileSync(viaGrpc, 'utf8'), /\[request id: after-grpc-move\] infer for model 'simple'$/m);
  });

  for (const [what, file] of [
    ['in a missing folder', join(folder, 'missing', 'server.log')],
    ['that is a directory', folder],
    ['on a full disk', '/dev/full'],
  ] as const) {
    test(`a log file ${what}: the server keeps serving`, async () => {
      assert.equal((await server.post('/v2/logging', { log_file: file })).status, 200);
      await assertServing(server, 'first');
      await assertServing(server, 'second');
    });
  }
});

test('issue 24: a server started with a log file in a missing folder serves', async () => {
  const file = join(mkdtempSync(join(tmpdir(), 'nereid-log-')), 'missing', 'server.log');
  const server = await startTestServer({ modelRepositories: [EXAMPLES], logger: createLogger({ info: true, warning: true, error: true, verboseLevel: 1, format: 'default', file }) });
  try {
    await assertServing(server);
    assert.equal(((await (await server.get('/v2/logging')).json()) as { log_file: string }).log_file, file);
  } finally {
    await server.close();
  }
});
