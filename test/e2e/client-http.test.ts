import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { HttpClient, type InferInput } from '../../src/client/index.js';
import { EDGE_VALUES, FIXED_TYPES, STRINGS, allTypesInputs, describeClientConformance, simpleInputs } from '../helpers/client-conformance.js';
import { startRecordingProxy } from '../helpers/recording-proxy.js';
import { EXAMPLES, FIXTURES, type TestServer, startTestServer } from '../helpers/server.js';

describe('HttpClient against the real server', () => {
  describeClientConformance({ protocol: 'http', connect: (server, address) => new HttpClient(address ?? server.url) });

  describe('http: the binary data extension and JSON', () => {
    let server: TestServer;
    let client: HttpClient;
    before(async () => {
      server = await startTestServer({ modelRepositories: [EXAMPLES, FIXTURES], isStrictReadiness: false });
      client = new HttpClient(server.url);
    });
    after(async () => {
      await client.close();
      await server.close();
    });

    /** What the client sends for one call, through a recording proxy. */
    async function sentFor(call: (proxied: HttpClient) => Promise<unknown>): Promise<string> {
      const proxy = await startRecordingProxy(server.url.replace('http://', ''));
      const proxied = new HttpClient(proxy.address);
      try {
        await call(proxied);
        return proxy.sentBytes().toString('latin1');
      } finally {
        await proxied.close();
        await proxy.close();
      }
    }

    test('binary data by default: the tensors follow the JSON header', async () => {
      const sent = await sentFor((proxied) => proxied.infer('simple', simpleInputs()));
      assert.match(sent, /^POST \/v2\/models\/simple\/infer HTTP\/1\.1\r\n/);
      const headerLength = Number(/inference-header-content-length: (\d+)/i.exec(sent)![1]);
      const body = sent.slice(sent.indexOf('\r\n\r\n') + 4);
      assert.deepEqual(JSON.parse(body.slice(0, headerLength)), {
        parameters: { binary_data_output: true },
        inputs: [
          { name: 'INPUT0', shape: [1, 16], datatype: 'INT32', parameters: { binary_data_size: 64 } },
          { name: 'INPUT1', shape: [1, 16], datatype: 'INT32', parameters: { binary_data_size: 64 } },
        ],
      });
      assert.equal(body.length - headerLength, 128);
    });

    test('JSON on request: every type but FP16 as JSON data, INT64 beyond 2^53 exact both ways', async () => {
      const sent = await sentFor((proxied) =>
        proxied.infer('identity_all_types', allTypesInputs(), {
          binaryData: false,
          outputs: [...FIXED_TYPES, 'BYTES'].map((type) => ({ name: `OUTPUT_${type}`, binaryData: type === 'FP16' })),
        }),
      );
      assert.match(sent, /"name":"INPUT_INT64","shape":\[1,3\],"datatype":"INT64","data":\[-9223372036854775808,-9007199254740995,9223372036854775807\]/);
      assert.match(sent, /"name":"INPUT_FP16","shape":\[1,3\],"datatype":"FP16","parameters":\{"binary_data_size":6\}/);
      const result = await client.infer('identity_all_types', allTypesInputs(), {
        binaryData: false,
        outputs: [...FIXED_TYPES, 'BYTES'].map((type) => ({ name: `OUTPUT_${type}`, binaryData: type === 'FP16' })),
      });
      // -0 keeps its sign both ways (written as -0.0).
      for (const type of FIXED_TYPES) assert.deepEqual(result.data(`OUTPUT_${type}`, type), EDGE_VALUES[type], type);
      assert.deepEqual(result.strings('OUTPUT_BYTES'), STRINGS);
    });

    test('JSON carries NaN and infinities as Python writers do', async () => {
      const inputs: InferInput[] = [{ name: 'INPUT0', datatype: 'FP32', shape: [1, 3], data: new Float32Array([Number.NaN, Infinity, -Infinity]) }];
      const result = await client.infer('nobatch_fp32', [{ ...inputs[0]!, shape: [1, 3] }], { binaryData: false });
      assert.deepEqual(result.data('OUTPUT0', 'FP32'), new Float32Array([Number.NaN, Infinity, -Infinity]));
    });

    test('the client option sets JSON for every call; a call can still ask for binary', async () => {
      const jsonClient = new HttpClient(server.url, { binaryData: false });
      try {
        const result = await jsonClient.infer('simple', simpleInputs());
        assert.deepEqual(result.data('OUTPUT0', 'INT32'), Int32Array.from({ length: 16 }, (_, i) => i + 1));
        const binary = await jsonClient.infer('simple', simpleInputs(), { binaryData: true });
        assert.deepEqual(binary.data('OUTPUT1', 'INT32'), Int32Array.from({ length: 16 }, (_, i) => i - 1));
      } finally {
        await jsonClient.close();
      }
    });

    test('a non-UTF-8 BYTES element cannot go as JSON: a clear error', async () => {
      await assert.rejects(client.infer('identity_bytes', [{ name: 'INPUT0', datatype: 'BYTES', shape: [1, 1], data: [new Uint8Array([0xff])] }], { binaryData: false }), {
        name: 'ClientError',
        message: "input 'INPUT0': element 0 is not UTF-8, which JSON cannot carry; send it as binary data (binaryData: true)",
      });
    });

    test('parameters in Triton\'s reserved namespace are refused by the server', async () => {
      await assert.rejects(client.infer('simple', simpleInputs(), { parameters: { triton_x: 1 } }), {
        name: 'ServerError',
        message: "parameter keys starting with 'triton_' are reserved for Triton usage. Only the following keys starting with 'triton_' are allowed: triton_enable_empty_final_response (request parameter 'triton_x')",
      });
    });

    test('headers of the client and of a call are sent', async () => {
      const proxy = await startRecordingProxy(server.url.replace('http://', ''));
      const proxied = new HttpClient(`http://${proxy.address}`, { headers: { 'x-client': 'a' } });
      try {
        await proxied.isServerReady({ headers: { 'x-call': 'b' } });
        const sent = proxy.sentBytes().toString();
        assert.match(sent, /\r\nx-client: a\r\n/);
        assert.match(sent, /\r\nx-call: b\r\n/);
      } finally {
        await proxied.close();
        await proxy.close();
      }
    });
  });
});
