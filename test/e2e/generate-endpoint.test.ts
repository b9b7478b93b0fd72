// The generate extension as Triton's qa/L0_http/generate_endpoint_test.py and generate_error_status_test.py
// check it, against mock_llm (test/fixtures/generate_repository): every text and status is Triton's
// (src/http_server.cc HandleGenerate, ConvertGenerateRequest, ExactMappingInput; TritonJson's texts).
import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { after, before, describe, test } from 'node:test';
import { type TestServer, startTestServer } from '../helpers/server.js';

const GENERATE_REPOSITORY = fileURLToPath(new URL('../fixtures/generate_repository', import.meta.url));
const SSE = 'text/event-stream; charset=utf-8';
const TEXT = 'hello world';
const textEvent = (text: string): string => `data: {"TEXT":${JSON.stringify(text)},"model_name":"mock_llm","model_version":"1"}\n\n`;
const missing = (count: number, given: string): string =>
  `expected 2 inputs but got ${count} inputs for model 'mock_llm'. Got input(s) [${given}], but missing required input(s) [${count === 0 ? "'PROMPT','STREAM'" : given === "'PROMPT'" ? "'STREAM'" : "'PROMPT'"}]. Please provide all required input(s).`;

interface Answer {
  readonly status: number;
  readonly contentType: string | null;
  readonly body: string;
}

describe('generate and generate_stream answer as Triton does (qa/L0_http generate tests)', () => {
  let server: TestServer;
  const post = async (route: 'generate' | 'generate_stream', body: unknown): Promise<Answer> => {
    const response = await server.post(`/v2/models/mock_llm/${route}`, body, route === 'generate_stream' ? { headers: { accept: 'text/event-stream' } } : {});
    return { status: response.status, contentType: response.headers.get('content-type'), body: await response.text() };
  };
  /** Both routes refuse the request before it runs: the same status and JSON error. */
  const assertRefused = async (body: unknown, status: number, error: string): Promise<void> => {
    for (const route of ['generate', 'generate_stream'] as const) {
      assert.deepEqual(await post(route, body), { status, contentType: 'application/json', body: JSON.stringify({ error }) }, `${route} ${JSON.stringify(body)}`);
    }
  };
  before(async () => {
    server = await startTestServer({ modelRepositories: [GENERATE_REPOSITORY] });
  });
  after(() => server.close());

  test('test_generate: single values are shaped from the inputs dims [1, 1]; a one-element output comes back as itself', async () => {
    assert.deepEqual(await post('generate', { PROMPT: TEXT, STREAM: false }), {
      status: 200,
      contentType: 'application/json',
      body: '{"TEXT":"hello world","model_name":"mock_llm","model_version":"1"}',
    });
  });

  test('test_generate_stream and test_parameters: one event per response, REPETITION given at the top or in "parameters"', async () => {
    const expected = { status: 200, contentType: SSE, body: textEvent(TEXT).repeat(3) };
    assert.deepEqual(await post('generate_stream', { PROMPT: [TEXT], STREAM: true, REPETITION: 3 }), expected);
    assert.deepEqual(await post('generate_stream', { PROMPT: [TEXT], STREAM: true, parameters: { REPETITION: 3 } }), expected);
    // The route's other form, with a trailing slash: streamed the same way (it once reached the HTTP/1.1 lane, which cannot stream).
    const slashed = await server.post('/v2/models/mock_llm/generate_stream/', { PROMPT: [TEXT], STREAM: true, REPETITION: 2 });
    assert.deepEqual({ status: slashed.status, body: await slashed.text() }, { status: 200, body: textEvent(TEXT).repeat(2) });
    assert.equal((await server.get('/v2/health/live')).status, 200);
  });

  test('test_missing_inputs: the core counts the inputs; keys that name none are parameters', async () => {
    await assertRefused({}, 400, missing(0, ''));
    await assertRefused({ abc: 123 }, 400, missing(0, ''));
    await assertRefused({ PROMPT: 'hello' }, 400, missing(1, "'PROMPT'"));
    await assertRefused({ STREAM: false }, 400, missing(1, "'STREAM'"));
    await assertRefused({ STREAM: false, other: 'param' }, 400, missing(1, "'STREAM'"));
  });

  test("test_invalid_input_types: TritonJson's texts, keys read in order (400, where Triton answers 500)", async () => {
    const notString = 'Unable to parse JSON bytes array: attempt to access JSON non-string as string';
    const notBoolean = "Unable to parse 'data': attempt to access JSON non-boolean as boolean";
    await assertRefused({ PROMPT: 123, STREAM: false }, 400, notString);
    await assertRefused({ PROMPT: 'hello', STREAM: 'false' }, 400, notBoolean);
    await assertRefused({ PROMPT: true, STREAM: 123 }, 400, notString);
    await assertRefused({ STREAM: 123, PROMPT: true }, 400, notBoolean);
  });

  test('test_duplicate_inputs: a key given twice is an input added twice, the first duplicate named', async () => {
    const prompt = "input 'PROMPT' already exists in request";
    const stream = "input 'STREAM' already exists in request";
    await assertRefused('{"PROMPT": "hello", "STREAM": false, "PROMPT": "duplicate"}', 400, prompt);
    await assertRefused('{"PROMPT": "hello", "STREAM": false, "STREAM": false}', 400, stream);
    await assertRefused('{"PROMPT": "hello", "STREAM": false, "PROMPT": "duplicate", "STREAM": true}', 400, prompt);
    await assertRefused('{"PROMPT": "hello", "STREAM": false, "STREAM": true, "PROMPT": "duplicate"}', 400, stream);
  });

  test('test_generate_stream_response_error: an error event; its status when it comes first, 200 after a response', async () => {
    const error = 'data: {"error":"An Error Occurred"}\n\n';
    assert.deepEqual(await post('generate_stream', { PROMPT: [TEXT], STREAM: true, REPETITION: 0, FAIL_LAST: true }), { status: 500, contentType: SSE, body: error });
    assert.deepEqual(await post('generate_stream', { PROMPT: [TEXT], STREAM: true, REPETITION: 1, FAIL_LAST: true }), {
      status: 200,
      contentType: SSE,
      body: textEvent(TEXT) + error,
    });
  });

  test("generate_error_status_test: a model's error keeps its code's status on both routes", async () => {
    for (const [errorCode, status] of [[undefined, 500], ['UNAVAILABLE', 503]] as const) {
      const body = { PROMPT: [TEXT], STREAM: true, REPETITION: 0, FAIL_LAST: true, ...(errorCode === undefined ? {} : { ERROR_CODE: errorCode }) };
      assert.deepEqual(await post('generate', body), { status, contentType: 'application/json', body: '{"error":"An Error Occurred"}' });
      assert.deepEqual(await post('generate_stream', body), { status, contentType: SSE, body: 'data: {"error":"An Error Occurred"}\n\n' });
    }
  });

  test('test_race_condition: 100 requests at once, each answered whole', async () => {
    const answers = await Promise.all(
      Array.from({ length: 50 }, () => [
        post('generate_stream', { PROMPT: 'hello', STREAM: false, param: 'segfault' }),
        post('generate_stream', { PROMPT: 'hello', STREAM: true, REPETITION: 3, param: 'segfault' }),
      ]).flat(),
    );
    answers.forEach((answer, index) => {
      assert.deepEqual(answer, { status: 200, contentType: SSE, body: textEvent('hello').repeat(index % 2 === 0 ? 1 : 3) });
    });
  });

  test('test_one_response: a final flag after the response, or with it, makes one response on both routes', async () => {
    for (const isStreaming of [true, false]) {
      assert.deepEqual(await post('generate_stream', { PROMPT: TEXT, STREAM: isStreaming }), { status: 200, contentType: SSE, body: textEvent(TEXT) });
      assert.deepEqual(await post('generate', { PROMPT: TEXT, STREAM: isStreaming }), {
        status: 200,
        contentType: 'application/json',
        body: '{"TEXT":"hello world","model_name":"mock_llm","model_version":"1"}',
      });
    }
  });

  test("test_zero_response and test_many_response: generate_stream sends what came; generate fails with Triton's text", async () => {
    const exactlyOne = {
      status: 400,
      contentType: 'application/json',
      body: JSON.stringify({ error: 'generate expects model to produce exactly 1 response, use generate stream for model that generates various number of responses' }),
    };
    assert.deepEqual(await post('generate_stream', { PROMPT: TEXT, STREAM: true, REPETITION: 0 }), { status: 200, contentType: SSE, body: '' });
    assert.deepEqual(await post('generate', { PROMPT: TEXT, STREAM: true, REPETITION: 0 }), exactlyOne);
    assert.deepEqual(await post('generate_stream', { PROMPT: TEXT, STREAM: true, REPETITION: 2 }), { status: 200, contentType: SSE, body: textEvent(TEXT).repeat(2) });
    assert.deepEqual(await post('generate', { PROMPT: TEXT, STREAM: true, REPETITION: 2 }), exactlyOne);
  });

  test('test_complex_schema and test_parameters: objects are refused where Triton refuses them', async () => {
    await assertRefused({ PROMPT: TEXT, STREAM: true, PARAMS: { PARAM_0: 0, PARAM_1: true } }, 400, "parameter 'PARAMS' has invalid type. It should be either 'int', 'bool', or 'string'.");
    await assertRefused({ PROMPT: { USER: TEXT, BOT: 'world hello' }, STREAM: true }, 400, 'Unable to parse JSON bytes array: attempt to access JSON non-string as string');
    await assertRefused({ PROMPT: [TEXT], STREAM: true, parameters: 1 }, 400, "Expected JSON object for keyword: 'parameters': attempt to access JSON non-object as object");
    await assertRefused(
      { PROMPT: [TEXT], STREAM: true, parameters: { nested: { twice: 1 } } },
      400,
      "Converting keyword: 'parameters': parameter 'nested' has invalid type. It should be either 'int', 'bool', or 'string'.",
    );
  });

  test('test_close_connection_during_streaming: the client leaves after the first event; the server stays live', async () => {
    const client = new AbortController();
    const response = await server.post('/v2/models/mock_llm/generate_stream', { PROMPT: [TEXT], STREAM: true, REPETITION: 3, DELAY: 0.2 }, { signal: client.signal });
    const reader = response.body!.getReader();
    assert.equal(Buffer.from((await reader.read()).value!).toString(), textEvent(TEXT));
    client.abort();
    assert.equal((await server.get('/v2/health/live')).status, 200);
    assert.deepEqual(await post('generate', { PROMPT: TEXT, STREAM: false }), {
      status: 200,
      contentType: 'application/json',
      body: '{"TEXT":"hello world","model_name":"mock_llm","model_version":"1"}',
    });
  });

  test("values that cannot fill the input's dims, and the request id: Triton's texts", async () => {
    await assertRefused({ PROMPT: ['a', 'b'], STREAM: false }, 400, "The schema can not convert input 'PROMPT' to tensor with proper shape");
    await assertRefused({ id: 5, PROMPT: TEXT, STREAM: false }, 400, "Unable to parse 'id': attempt to access JSON non-string as string");
    assert.deepEqual(await post('generate', { id: 'req-7', PROMPT: TEXT, STREAM: false }), {
      status: 200,
      contentType: 'application/json',
      body: '{"TEXT":"hello world","id":"req-7","model_name":"mock_llm","model_version":"1"}',
    });
  });
});
