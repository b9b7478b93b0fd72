import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { GrpcClient, HttpClient, type InferOptions } from '../../src/client/index.js';
import { simpleInputs } from '../helpers/client-conformance.js';
import { EXAMPLES, type TestServer, startTestServer } from '../helpers/server.js';

/** Requests whose parameters one function (frontends/request-parameters.ts) judges for both protocols. */
const CASES: ReadonlyArray<{ readonly title: string; readonly options: InferOptions; readonly status?: string; readonly message?: string }> = [
  {
    title: "a request parameter in Triton's reserved namespace",
    options: { parameters: { triton_x: true } },
    status: 'INVALID_ARG',
    message:
      "parameter keys starting with 'triton_' are reserved for Triton usage. Only the following keys starting with 'triton_' are allowed: triton_enable_empty_final_response (request parameter 'triton_x')",
  },
  {
    title: 'an output in shared memory on a server started without --allow-client-shm',
    options: { outputs: [{ name: 'OUTPUT0', parameters: { shared_memory_region: 'r', shared_memory_byte_size: 64 } }] },
    status: 'UNAVAILABLE',
    message: "Client shared memory is disabled. Start the server with '--allow-client-shm=true' to enable.",
  },
  { title: "Triton's one reserved key a client may set", options: { parameters: { triton_enable_empty_final_response: true } } },
];

describe('HTTP and gRPC refuse the same request parameters, with the same status and message', () => {
  let server: TestServer;
  let clients: ReadonlyArray<readonly [string, HttpClient | GrpcClient]>;
  before(async () => {
    server = await startTestServer({ modelRepositories: [EXAMPLES], modelControlMode: 'explicit', startupModels: ['simple'] });
    clients = [
      ['HTTP', new HttpClient(server.url)],
      ['gRPC', new GrpcClient(server.grpcUrl!)],
    ];
  });
  after(async () => {
    for (const [, client] of clients) await client.close();
    await server.close();
  });

  for (const { title, options, status, message } of CASES) {
    test(title, async () => {
      for (const [protocol, client] of clients) {
        const call = client.infer('simple', simpleInputs(), options);
        if (status === undefined) {
          const result = await call;
          assert.deepEqual([...(result.output('OUTPUT0').data as Int32Array)], Array.from({ length: 16 }, (_, i) => i + 1), protocol);
        } else {
          await assert.rejects(call, (error: { status: string; message: string }) => {
            assert.deepEqual({ status: error.status, message: error.message }, { status, message }, protocol);
            return true;
          });
        }
      }
    });
  }
});
