import assert from 'node:assert/strict';
import { test } from 'node:test';
import { SAGEMAKER_BINARY_MIME, VERTEX_AI_BINARY_MIME, jsonHeaderSize } from './json-header-size.js';

const vertexAiHeaderLength = (contentType: string | undefined, length: number): number => jsonHeaderSize(VERTEX_AI_BINARY_MIME, contentType, length);

test('the JSON header is the whole body for JSON and without a Content-Type', () => {
  assert.equal(vertexAiHeaderLength('application/json', 120), 120);
  assert.equal(vertexAiHeaderLength(undefined, 7), 7);
});

test("the JSON header's length comes from Vertex AI's binary MIME type", () => {
  assert.equal(vertexAiHeaderLength(`${VERTEX_AI_BINARY_MIME}100`, 164), 100);
  assert.equal(vertexAiHeaderLength(`${VERTEX_AI_BINARY_MIME}164`, 164), 164);
});

test("the length is read as C's atoi reads it: digits up to the first other character, 0 without any", () => {
  assert.equal(vertexAiHeaderLength(`${VERTEX_AI_BINARY_MIME} 42abc`, 164), 42);
  assert.equal(vertexAiHeaderLength(`${VERTEX_AI_BINARY_MIME}additional-string100`, 164), 0);
});

test("the MIME type elsewhere than at the start is refused in Triton's words", () => {
  const contentType = `additional-string/${VERTEX_AI_BINARY_MIME}100`;
  assert.throws(() => vertexAiHeaderLength(contentType, 164), {
    status: 'INVALID_ARG',
    message: `expect MIME type for binary data starts with '${VERTEX_AI_BINARY_MIME}', got: ${contentType}`,
  });
});

test("a length outside the body is refused in Triton's words", () => {
  assert.throws(() => vertexAiHeaderLength(`${VERTEX_AI_BINARY_MIME}-123`, 164), {
    status: 'INVALID_ARG',
    message: 'inference header size should be in range (0, 164), got: -123',
  });
  assert.throws(() => vertexAiHeaderLength(`${VERTEX_AI_BINARY_MIME}12345`, 164), {
    status: 'INVALID_ARG',
    message: 'inference header size should be in range (0, 164), got: 12345',
  });
});

test("SageMaker's MIME type is read the same way, and Vertex AI's is not taken for it", () => {
  assert.equal(jsonHeaderSize(SAGEMAKER_BINARY_MIME, `${SAGEMAKER_BINARY_MIME}100`, 164), 100);
  assert.equal(jsonHeaderSize(SAGEMAKER_BINARY_MIME, `${VERTEX_AI_BINARY_MIME}100`, 164), 164);
});
