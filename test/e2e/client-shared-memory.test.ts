import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { GrpcClient, HttpClient, ServerError, SystemSharedMemoryRegion } from '../../src/client/index.js';
import { EXAMPLES, type TestServer, startTestServer } from '../helpers/server.js';

describe('nereid/client: system shared memory over HTTP and gRPC', () => {
  let server: TestServer;
  let clients: ReadonlyArray<readonly [string, HttpClient | GrpcClient]>;
  before(async () => {
    server = await startTestServer({ modelRepositories: [EXAMPLES], modelControlMode: 'explicit', startupModels: ['simple', 'identity_bytes'], isClientShmAllowed: true });
    clients = [
      ['http', new HttpClient(server.url)],
      ['grpc', new GrpcClient(server.grpcUrl!)],
    ];
  });
  after(async () => {
    for (const [, client] of clients) await client.close();
    await server.close();
  });

  for (const protocol of ['http', 'grpc']) {
    test(`${protocol}: create, register, infer with inputs and outputs in regions, read, unregister`, async (t) => {
      const client = clients.find(([name]) => name === protocol)![1];
      const region = SystemSharedMemoryRegion.create(`/nereid_client_${protocol}_${process.pid}`, 256);
      t.after(() => region.close());
      const input0 = Int32Array.from({ length: 16 }, (_, i) => i * 3);
      const input1 = Int32Array.from({ length: 16 }, () => 2);
      region.write(input0, 0);
      region.write(input1, 64);
      await client.registerSystemSharedMemory('io', region.key, 256);
      assert.deepEqual(await client.systemSharedMemoryStatus(), [{ name: 'io', key: region.key, offset: 0, byteSize: 256 }]);
      const result = await client.infer(
        'simple',
        [
          { name: 'INPUT0', datatype: 'INT32', shape: [1, 16], sharedMemory: { region: 'io', byteSize: 64 } },
          { name: 'INPUT1', datatype: 'INT32', shape: [1, 16], sharedMemory: { region: 'io', byteSize: 64, offset: 64 } },
        ],
        {
          outputs: [
            { name: 'OUTPUT0', sharedMemory: { region: 'io', byteSize: 64, offset: 128 } },
            { name: 'OUTPUT1', sharedMemory: { region: 'io', byteSize: 64, offset: 192 } },
          ],
        },
      );
      assert.deepEqual(result.output('OUTPUT0').shape, [1, 16]);
      assert.equal((result.output('OUTPUT0').data as Int32Array).length, 0);
      assert.deepEqual([...(region.readTensor('INT32', [1, 16], 128) as Int32Array)], [...input0].map((v) => v + 2));
      assert.deepEqual([...(region.readTensor('INT32', [1, 16], 192) as Int32Array)], [...input0].map((v) => v - 2));

      region.write(['shared', '', 'memory'], 0);
      const bytes = await client.infer('identity_bytes', [{ name: 'INPUT0', datatype: 'BYTES', shape: [1, 3], sharedMemory: { region: 'io', byteSize: 4 * 3 + 12 } }], {
        outputs: [{ name: 'OUTPUT0', sharedMemory: { region: 'io', byteSize: 100, offset: 128 } }],
      });
      assert.deepEqual(bytes.output('OUTPUT0').shape, [1, 3]);
      assert.deepEqual((region.readTensor('BYTES', [1, 3], 128) as Uint8Array[]).map((element) => Buffer.from(element).toString()), ['shared', '', 'memory']);

      await assert.rejects(client.registerSystemSharedMemory('io', region.key, 8), (error: ServerError) => {
        // HTTP carries ALREADY_EXISTS as 400, which the client reads as INVALID_ARG.
        const status = protocol === 'http' ? 'INVALID_ARG' : 'ALREADY_EXISTS';
        assert.deepEqual({ status: error.status, message: error.message }, { status, message: "shared memory region 'io' already in manager" });
        return true;
      });
      await client.unregisterSystemSharedMemory('io');
      assert.deepEqual(await client.systemSharedMemoryStatus(), []);
      await client.unregisterSystemSharedMemory();
    });

    test(`${protocol}: 32 requests at once share one input region, each writing its own stretch of one output region`, async (t) => {
      const client = clients.find(([name]) => name === protocol)![1];
      const count = 32;
      const inputs = SystemSharedMemoryRegion.create(`/nereid_client_many_in_${protocol}_${process.pid}`, 64 * (count + 1));
      const outputs = SystemSharedMemoryRegion.create(`/nereid_client_many_out_${protocol}_${process.pid}`, 128 * count);
      t.after(() => {
        inputs.close();
        outputs.close();
      });
      inputs.write(Int32Array.from({ length: 16 }, () => 1000), 0);
      for (let index = 0; index < count; index++) inputs.write(Int32Array.from({ length: 16 }, (_, i) => index * 16 + i), 64 * (index + 1));
      await client.registerSystemSharedMemory('many_in', inputs.key, inputs.byteSize);
      await client.registerSystemSharedMemory('many_out', outputs.key, outputs.byteSize);
      await Promise.all(
        Array.from({ length: count }, (_, index) =>
          client.infer(
            'simple',
            [
              { name: 'INPUT0', datatype: 'INT32', shape: [1, 16], sharedMemory: { region: 'many_in', byteSize: 64, offset: 64 * (index + 1) } },
              { name: 'INPUT1', datatype: 'INT32', shape: [1, 16], sharedMemory: { region: 'many_in', byteSize: 64 } },
            ],
            {
              outputs: [
                { name: 'OUTPUT0', sharedMemory: { region: 'many_out', byteSize: 64, offset: 128 * index } },
                { name: 'OUTPUT1', sharedMemory: { region: 'many_out', byteSize: 64, offset: 128 * index + 64 } },
              ],
            },
          ),
        ),
      );
      for (let index = 0; index < count; index++) {
        const expected = Array.from({ length: 16 }, (_, i) => index * 16 + i);
        assert.deepEqual([...(outputs.readTensor('INT32', [16], 128 * index) as Int32Array)], expected.map((v) => v + 1000), `request ${index}`);
        assert.deepEqual([...(outputs.readTensor('INT32', [16], 128 * index + 64) as Int32Array)], expected.map((v) => v - 1000), `request ${index}`);
      }
      await client.unregisterSystemSharedMemory();
    });
  }
});
