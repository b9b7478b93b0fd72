import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { create } from '@bufbuild/protobuf';
import { Client, credentials } from '@grpc/grpc-js';
import { InferenceServer, RequestRouter } from '../../core/index.js';
import { silentLogger } from '../../logging/logger.js';
import { RepositoryManager } from '../../repository/repository-manager.js';
import { ServerLiveRequestSchema, ServerLiveResponseSchema } from '../../protocol/gen/grpc_service_pb.js';
import { inferenceService } from '../../protocol/grpc-service.js';
import { FLOW_CONTROL_WINDOW_BYTES, GrpcFrontend } from './grpc-server.js';

test('connections and streams get the 16 MiB flow-control window', async () => {
  const router = new RequestRouter({
    prepare: (name) => repository.prepareModel(name),
    lookup: (name, version) => repository.getModel(name, version),
  });
  const repository: RepositoryManager = new RepositoryManager({
    repositoryPaths: [mkdtempSync(join(tmpdir(), 'nereid-empty-'))],
    controlMode: 'none',
    startupModels: [],
    unloadTimeoutMs: 30_000,
    loadTimeoutMs: 600_000,
    maxInputBytes: 2 ** 26,
    isAutoCompleteEnabled: true,
    context: { logger: silentLogger, defaultMaxBatchSize: 4, cpuCount: 2, caller: router },
    logger: silentLogger,
  });
  await repository.loadAll();
  const server = new InferenceServer({ repository, router, id: 'nereid', version: '0', isStrictReadiness: true, logger: silentLogger });
  const frontend = new GrpcFrontend({
    server,
    logger: silentLogger,
    maxMessageBytes: 2 ** 31 - 1,
    keepaliveTimeMs: 7_200_000,
    keepaliveTimeoutMs: 20_000,
    isKeepalivePermittedWithoutCalls: false,
    http2MaxPingStrikes: 2,
    http2MinPingIntervalWithoutDataMs: 300_000,
  });
  const port = await frontend.listen(0, '127.0.0.1');
  const client = new Client(`127.0.0.1:${port}`, credentials.createInsecure());
  try {
    const { path, requestSerialize, responseDeserialize } = inferenceService.serverLive;
    const live = await new Promise((resolve, reject) =>
      client.makeUnaryRequest(path, requestSerialize, responseDeserialize, create(ServerLiveRequestSchema), (error, response) =>
        error !== null ? reject(error) : resolve(response),
      ),
    );
    assert.deepEqual(live, create(ServerLiveResponseSchema, { live: true }));
    const windows = frontend.flowControlWindows();
    assert.equal(windows.length, 1);
    assert.equal(windows[0]!.streamBytes, FLOW_CONTROL_WINDOW_BYTES);
    assert.ok(windows[0]!.connectionBytes >= FLOW_CONTROL_WINDOW_BYTES - 1024, `connection window ${windows[0]!.connectionBytes}`);
  } finally {
    client.close();
    await frontend.close();
  }
});
