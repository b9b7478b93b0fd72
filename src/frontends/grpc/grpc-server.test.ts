import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { create } from '@bufbuild/protobuf';
import { Client, credentials, status } from '@grpc/grpc-js';
import { InferenceServer, RequestRouter } from '../../core/index.js';
import { silentLogger } from '../../logging/logger.js';
import { RepositoryManager } from '../../repository/repository-manager.js';
import { ModelInferRequestSchema, ServerLiveRequestSchema, ServerLiveResponseSchema } from '../../protocol/gen/grpc_service_pb.js';
import { inferenceService } from '../../protocol/grpc-service.js';
import { FLOW_CONTROL_WINDOW_BYTES, GrpcFrontend } from './grpc-server.js';

/** Triton's keepalive defaults, which these tests do not exercise. */
const KEEPALIVE_DEFAULTS = {
  keepaliveTimeMs: 7_200_000,
  keepaliveTimeoutMs: 20_000,
  isKeepalivePermittedWithoutCalls: false,
  http2MaxPingStrikes: 2,
  http2MinPingIntervalWithoutDataMs: 300_000,
};

async function emptyServer(): Promise<InferenceServer> {
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
  return new InferenceServer({ repository, router, id: 'nereid', version: '0', isStrictReadiness: true, logger: silentLogger });
}

test('connections and streams get the 16 MiB flow-control window', async () => {
  const frontend = new GrpcFrontend({
    server: await emptyServer(),
    logger: silentLogger,
    maxMessageBytes: 2 ** 31 - 1,
    ...KEEPALIVE_DEFAULTS,
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

test('a compressed message may inflate to maxDecompressedMessageBytes, checked while it inflates; an uncompressed one to maxMessageBytes', async () => {
  const frontend = new GrpcFrontend({
    server: await emptyServer(),
    logger: silentLogger,
    maxMessageBytes: 4 * 2 ** 20,
    maxDecompressedMessageBytes: 2 ** 20,
    ...KEEPALIVE_DEFAULTS,
  });
  const port = await frontend.listen(0, '127.0.0.1');
  const infer = (client: Client): Promise<{ code: number; details: string }> => {
    const { path, requestSerialize, responseDeserialize } = inferenceService.modelInfer;
    const request = create(ModelInferRequestSchema, { modelName: 'nope', rawInputContents: [new Uint8Array(2 * 2 ** 20)] });
    return new Promise((resolve) =>
      client.makeUnaryRequest(path, requestSerialize, responseDeserialize, request, (error) => resolve({ code: error!.code, details: error!.details })),
    );
  };
  const gzipClient = new Client(`127.0.0.1:${port}`, credentials.createInsecure(), { 'grpc.default_compression_algorithm': 2 });
  const plainClient = new Client(`127.0.0.1:${port}`, credentials.createInsecure());
  try {
    assert.deepEqual(await infer(gzipClient), { code: status.RESOURCE_EXHAUSTED, details: 'Received message that decompresses to a size larger than 1048576' });
    assert.deepEqual(await infer(plainClient), {
      code: status.INVALID_ARGUMENT,
      details: "Request for unknown model: 'nope' is not found",
    });
  } finally {
    gzipClient.close();
    plainClient.close();
    await frontend.close();
  }
});
