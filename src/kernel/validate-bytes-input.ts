import type { CutElement } from './bytes-slices.js';
import { NereidError } from './errors.js';

/**
 * A BYTES input's elements against its shape, in the words and order of Triton's core
 * (InferenceRequest::ValidateBytesInputs, core src/infer_request.cc; core
 * src/test/input_byte_size_test.cc and qa/L0_input_validation compare them). Triton walks the
 * serialized bytes: at each element boundary with bytes left, one element past the expected count is
 * refused at once; fewer than 4 bytes cannot hold the next length; then an element is counted, even
 * one whose string runs past the end. Undefined when the core accepts the input, which it does for an
 * input whose last string alone is cut short (see cutStringError).
 */
export function bytesInputError(name: string, modelName: string, expected: number, elements: number, cut: CutElement | undefined): NereidError | undefined {
  if (elements > expected || (elements === expected && cut !== undefined)) {
    return new NereidError(
      'INVALID_ARG',
      `unexpected number of string elements ${expected + 1} for inference input '${name}' for model '${modelName}', expecting ${expected}`,
    );
  }
  if (cut?.part === 'length') {
    return new NereidError(
      'INVALID_ARG',
      `incomplete string length indicator for inference input '${name}' for model '${modelName}', expecting 4 bytes but only ${cut.available} bytes available. Please make sure the string length indicator is in one buffer.`,
    );
  }
  const checked = cut === undefined ? elements : elements + 1;
  if (checked !== expected) {
    return new NereidError('INVALID_ARG', `expected ${expected} string elements for inference input '${name}' for model '${modelName}', got ${checked}`);
  }
  return undefined;
}

/**
 * An input whose last string runs past the end of its bytes, which Triton's core lets through: its
 * backends refuse it as they read the strings, in these words (ValidateStringBuffer, backend
 * src/backend_common.cc, which the ONNX Runtime, PyTorch and Python backends call), after every check
 * of the core.
 */
export function cutStringError(name: string, cut: Extract<CutElement, { part: 'string' }>): NereidError {
  return new NereidError(
    'INVALID_ARG',
    `incomplete string data for inference input '${name}', expecting string of length ${cut.length} but only ${cut.available} bytes available`,
  );
}
