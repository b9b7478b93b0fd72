import type { DataType } from './data-type.js';

/*
 * The metadata replies of the KServe v2 protocol, as both transports carry them
 * (docs/protocol/README.md in Triton's server repository: "Server Metadata", "Model Metadata").
 */

export interface ServerMetadata {
  readonly name: string;
  readonly version: string;
  readonly extensions: readonly string[];
}

export interface TensorMetadata {
  readonly name: string;
  readonly datatype: DataType;
  /** -1 for a variable dimension; with the batch dimension first when the model batches. */
  readonly shape: readonly number[];
}

export interface ModelMetadata {
  readonly name: string;
  readonly versions: readonly string[];
  readonly platform: string;
  readonly inputs: readonly TensorMetadata[];
  readonly outputs: readonly TensorMetadata[];
}
