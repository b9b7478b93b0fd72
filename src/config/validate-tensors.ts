import { NereidError } from '../kernel/errors.js';
import {
  BatchInput_Kind,
  BatchOutput_Kind,
  DataType,
  ModelInput_Format,
  type ModelConfig,
  type ModelInput,
  type ModelOutput,
} from '../protocol/gen/model_config_pb.js';

/** Triton's marker for a dimension of any size (triton/common model_config.h WILDCARD_DIM). */
export const WILDCARD_DIM = -1n;

/**
 * Checks the inputs, outputs, batch inputs and batch outputs, as Triton's ValidateModelIOConfig,
 * ValidateIOShape and ValidateBatchIO do (core src/model_config_utils.cc), plus unique tensor names.
 */
export function validateTensors(config: ModelConfig, file: string): void {
  config.input.forEach((input, index) => validateInput(config, input, `input[${index}]`, file));
  config.output.forEach((output, index) => validateTensor(config, output, `output[${index}]`, file));
  requireUniqueNames(config.input, 'input', file);
  requireUniqueNames(config.output, 'output', file);
  validateBatchTensors(config, file);
}

function validateInput(config: ModelConfig, input: ModelInput, path: string, file: string): void {
  validateTensor(config, input, path, file);
  const isImageFormat = input.format === ModelInput_Format.NHWC || input.format === ModelInput_Format.NCHW;
  if (isImageFormat && input.dims.length !== 3) {
    throw invalid(file, `${path}.format is FORMAT_${ModelInput_Format[input.format]} but dims has ${input.dims.length} dimensions; expected 3 dimensions (no batch dimension) for an image format`);
  }
}

function validateTensor(config: ModelConfig, tensor: ModelInput | ModelOutput, path: string, file: string): void {
  if (tensor.name === '') {
    throw invalid(file, `${path}.name is empty; expected a tensor name`);
  }
  const named = `${path} '${tensor.name}'`;
  if (tensor.dataType === DataType.TYPE_INVALID || DataType[tensor.dataType] === undefined) {
    const what = tensor.dataType === DataType.TYPE_INVALID ? 'has no data_type' : `has unknown data_type ${tensor.dataType}`;
    throw invalid(file, `${named} ${what}; expected a type such as TYPE_FP32, TYPE_INT64 or TYPE_STRING`);
  }
  if (tensor.dims.length === 0) {
    throw invalid(file, `${named} has empty dims; expected at least one dimension (a scalar is dims: [ 1 ] with reshape: { shape: [ ] })`);
  }
  const reshape = tensor.reshape;
  if (reshape !== undefined && reshape.shape.length === 0 && config.maxBatchSize === 0) {
    throw invalid(file, `${named} has an empty reshape but max_batch_size is 0; expected a non-empty reshape.shape, scalar tensors need a batch dimension`);
  }
  checkDims(tensor.dims, `${path}.dims`, file);
  if (reshape !== undefined) {
    checkDims(reshape.shape, `${path}.reshape.shape`, file);
    checkReshape(tensor.dims, reshape.shape, named, file);
  }
  if (tensor.isShapeTensor && config.platform !== 'tensorrt_plan') {
    throw invalid(file, `${named} has is_shape_tensor: true; expected it only with platform 'tensorrt_plan'`);
  }
  if (tensor.isNonLinearFormatIo) {
    if (config.platform !== 'tensorrt_plan') {
      throw invalid(file, `${named} has is_non_linear_format_io: true; expected it only with platform 'tensorrt_plan'`);
    }
    if (tensor.dims.length !== 3) {
      throw invalid(file, `${named} has is_non_linear_format_io: true with ${tensor.dims.length} dims; expected 3 dims`);
    }
  }
}

function checkDims(dims: readonly bigint[], path: string, file: string): void {
  dims.forEach((dim, index) => {
    if (dim < 1n && dim !== WILDCARD_DIM) {
      throw invalid(file, `${path}[${index}] is ${dim}; expected an integer >= 1, or -1 for a variable-size dimension`);
    }
  });
}

/**
 * dims and reshape must hold the same number of elements. With -1 dimensions, the products of the fixed
 * dimensions between the -1s must match pairwise: [2, 4, -1, 6] may become [8, -1, 1, 6]. An empty reshape
 * (a scalar) needs dims holding exactly one element.
 */
function checkReshape(dims: readonly bigint[], shape: readonly bigint[], named: string, file: string): void {
  const dimsCount = elementCount(dims);
  const shapeCount = elementCount(shape);
  const mismatch = (): NereidError =>
    invalid(file, `${named} has dims [${dims.join(',')}] and reshape.shape [${shape.join(',')}] of different sizes; expected the same number of elements`);
  if (dimsCount !== shapeCount && !(shapeCount === 0n && dimsCount === 1n)) {
    throw mismatch();
  }
  if (dimsCount === WILDCARD_DIM) {
    const dimsSegments = segmentCounts(dims);
    const shapeSegments = segmentCounts(shape);
    if (dimsSegments.length !== shapeSegments.length) {
      throw invalid(file, `${named} has ${dimsSegments.length - 1} variable-size dimensions in dims but ${shapeSegments.length - 1} in reshape.shape; expected the same number`);
    }
    if (dimsSegments.some((count, index) => count !== shapeSegments[index])) {
      throw mismatch();
    }
  }
}

/** Triton's GetElementCount: -1 with any variable dimension, 0 for an empty shape, else the product. */
function elementCount(dims: readonly bigint[]): bigint {
  if (dims.includes(WILDCARD_DIM)) {
    return WILDCARD_DIM;
  }
  return dims.length === 0 ? 0n : dims.reduce((product, dim) => product * dim, 1n);
}

/** Products of the fixed dimensions before, between and after the -1 dimensions. */
function segmentCounts(dims: readonly bigint[]): bigint[] {
  const counts = [1n];
  for (const dim of dims) {
    if (dim === WILDCARD_DIM) {
      counts.push(1n);
    } else {
      counts[counts.length - 1]! *= dim;
    }
  }
  return counts;
}

function requireUniqueNames(tensors: readonly { name: string }[], field: string, file: string): void {
  const firstIndex = new Map<string, number>();
  tensors.forEach((tensor, index) => {
    const first = firstIndex.get(tensor.name);
    if (first !== undefined) {
      throw invalid(file, `${field}[${index}].name '${tensor.name}' is already the name of ${field}[${first}]; expected unique ${field} names`);
    }
    firstIndex.set(tensor.name, index);
  });
}

function validateBatchTensors(config: ModelConfig, file: string): void {
  const inputNames = new Set(config.input.map((input) => input.name));
  const outputNames = new Set(config.output.map((output) => output.name));
  config.batchInput.forEach((batchInput, index) => {
    const path = `batch_input[${index}]`;
    if (BatchInput_Kind[batchInput.kind] === undefined) {
      throw invalid(file, `${path}.kind ${batchInput.kind} is unknown; expected a BatchInput kind such as BATCH_ELEMENT_COUNT`);
    }
    if (batchInput.sourceInput.length !== 1) {
      throw invalid(file, `${path} of kind ${BatchInput_Kind[batchInput.kind]} has ${batchInput.sourceInput.length} source_input entries; expected exactly 1`);
    }
    if (batchInput.dataType !== DataType.TYPE_INT32 && batchInput.dataType !== DataType.TYPE_FP32) {
      throw invalid(file, `${path}.data_type is ${DataType[batchInput.dataType] ?? batchInput.dataType}; expected TYPE_INT32 or TYPE_FP32`);
    }
    requireInputs(batchInput.sourceInput, inputNames, `${path}.source_input`, file);
  });
  config.batchOutput.forEach((batchOutput, index) => {
    const path = `batch_output[${index}]`;
    if (BatchOutput_Kind[batchOutput.kind] === undefined) {
      throw invalid(file, `${path}.kind ${batchOutput.kind} is unknown; expected BATCH_SCATTER_WITH_INPUT_SHAPE`);
    }
    if (batchOutput.sourceInput.length !== 1) {
      throw invalid(file, `${path} of kind ${BatchOutput_Kind[batchOutput.kind]} has ${batchOutput.sourceInput.length} source_input entries; expected exactly 1`);
    }
    requireInputs(batchOutput.sourceInput, inputNames, `${path}.source_input`, file);
    const seen = new Set<string>();
    batchOutput.targetName.forEach((target, targetIndex) => {
      if (!outputNames.has(target)) {
        throw invalid(file, `${path}.target_name[${targetIndex}] '${target}' is not an output; expected one of ${[...outputNames].join(', ')}`);
      }
      if (seen.has(target)) {
        throw invalid(file, `${path}.target_name[${targetIndex}] '${target}' is listed twice; expected each target output once`);
      }
      seen.add(target);
    });
  });
}

function requireInputs(names: readonly string[], inputNames: ReadonlySet<string>, path: string, file: string): void {
  names.forEach((name, index) => {
    if (!inputNames.has(name)) {
      const expected = inputNames.size === 0 ? 'the name of a model input' : `one of ${[...inputNames].join(', ')}`;
      throw invalid(file, `${path}[${index}] '${name}' is not an input; expected ${expected}`);
    }
  });
}

function invalid(file: string, message: string): NereidError {
  return new NereidError('INVALID_ARG', `${file}: ${message}`);
}
