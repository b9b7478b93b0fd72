import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { EXAMPLES, type TestServer, binaryBody, readInferResponse, startTestServer } from '../helpers/server.js';

const ELEMENTS = 4_000_000;

describe('a request of 4 million empty BYTES strings does not stall other clients', () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer({ modelRepositories: [EXAMPLES], modelControlMode: 'explicit', startupModels: ['identity_bytes'] });
  });
  after(() => server.close());

  test('decoding them yields: health requests keep being answered while a request that fails after decoding is read', async () => {
    // 'INPUT1' is not an input of identity_bytes: the request is refused once its 4 million elements are decoded.
    const { body, headers } = binaryBody(
      { inputs: [{ name: 'INPUT1', datatype: 'BYTES', shape: [1, ELEMENTS], parameters: { binary_data_size: 4 * ELEMENTS } }] },
      [new Uint8Array(4 * ELEMENTS)],
    );
    let isBigDone = false;
    let answeredMeanwhile = 0;
    const big = server.post('/v2/models/identity_bytes/infer', body, { headers }).then(async (response) => {
      const result = { status: response.status, json: await response.json() };
      isBigDone = true;
      return result;
    });
    const others = (async () => {
      while (!isBigDone) {
        await server.get('/v2/health/live');
        if (!isBigDone) answeredMeanwhile++;
      }
    })();
    const { status, json } = await big;
    await others;
    assert.equal(status, 400);
    assert.deepEqual(json, { error: "unexpected inference input 'INPUT1' for model 'identity_bytes'; the model's inputs are 'INPUT0'" });
    assert.ok(answeredMeanwhile >= 20, `${answeredMeanwhile} health requests were answered while it was decoded`);
  });

  test('health requests sent meanwhile are answered before it finishes, and its answer is whole', async () => {
    // 16 MB: each empty string is its 4-byte length prefix.
    const { body, headers } = binaryBody(
      {
        inputs: [{ name: 'INPUT0', datatype: 'BYTES', shape: [1, ELEMENTS], parameters: { binary_data_size: 4 * ELEMENTS } }],
        outputs: [{ name: 'OUTPUT0', parameters: { binary_data: true } }],
      },
      [new Uint8Array(4 * ELEMENTS)],
    );
    let isBigDone = false;
    let answeredMeanwhile = 0;
    const big = server.post('/v2/models/identity_bytes/infer', body, { headers }).then(async (response) => {
      const result = { status: response.status, ...(await readInferResponse(response)) };
      isBigDone = true;
      return result;
    });
    const others = (async () => {
      while (!isBigDone) {
        const response = await server.get('/v2/health/live');
        assert.equal(response.status, 200);
        if (!isBigDone) answeredMeanwhile++;
      }
    })();
    const { status, json, binary } = await big;
    await others;
    assert.equal(status, 200);
    assert.deepEqual(json.outputs[0]!.shape, [1, ELEMENTS]);
    assert.equal(binary.byteLength, 4 * ELEMENTS);
    assert.ok(binary.every((byte) => byte === 0));
    assert.ok(answeredMeanwhile >= 5, `${answeredMeanwhile} health requests were answered while it ran`);
  });
});
