import { InferenceSession } from 'onnxruntime-node';
import type { DataType } from '../../protocol/data-type.js';
import { NereidError } from '../../kernel/errors.js';
import { dataTypeOfOrt } from './ort-tensors.js';

/** An input or output of an ONNX graph: symbolic or unknown dimensions read as -1. */
export interface OnnxTensorInfo {
  readonly name: string;
  readonly dataType: DataType;
  readonly shape: readonly number[];
}

export interface OnnxModelInfo {
  readonly inputs: readonly OnnxTensorInfo[];
  readonly outputs: readonly OnnxTensorInfo[];
}

/**
 * Reads an ONNX model's inputs and outputs with a short-lived session on the calling thread.
 * Used at load time only (auto-complete and the config check), never on the request path.
 */
export async function readOnnxModelInfo(modelPath: string): Promise<OnnxModelInfo> {
  let session: InferenceSession;
  try {
    session = await InferenceSession.create(modelPath, { intraOpNumThreads: 1, graphOptimizationLevel: 'disabled' });
  } catch (error) {
    throw new NereidError('INVALID_ARG', `ONNX Runtime cannot load the model: ${(error as Error).message}`);
  }
  try {
    const convert = (metadata: readonly InferenceSession.ValueMetadata[]): OnnxTensorInfo[] =>
      metadata.map((value) => {
        if (!value.isTensor) {
          throw new NereidError('INVALID_ARG', `'${modelPath}': '${value.name}' is not a tensor; only tensor inputs and outputs are supported`);
        }
        const dataType = dataTypeOfOrt(value.type);
        if (dataType === undefined) {
          throw new NereidError('INVALID_ARG', `'${modelPath}': tensor '${value.name}' has element type '${value.type}', which Nereid cannot serve`);
        }
        return {
          name: value.name,
          dataType,
          shape: value.shape.map((dim) => (typeof dim === 'number' && dim >= 0 ? dim : -1)),
        };
      });
    return { inputs: convert(session.inputMetadata), outputs: convert(session.outputMetadata) };
  } finally {
    await session.release();
  }
}
