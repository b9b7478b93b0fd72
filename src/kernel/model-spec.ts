import type { DataType } from '../protocol/data-type.js';

/** What a request is checked against: one input or output of a loaded model, from its configuration. */
export interface TensorSpec {
  readonly name: string;
  readonly dataType: DataType;
  /** The config `dims`, without the batch dimension; -1 is a wildcard. */
  readonly dims: readonly number[];
  /** The shape the backend sees instead of `dims` (config `reshape`), without the batch dimension. */
  readonly reshape?: readonly number[];
  readonly isOptional: boolean;
  /** Class labels from the output's `label_filename`, one per line. */
  readonly labels?: readonly string[];
}

/** A loaded model version's interface, derived once at load time from its normalised configuration. */
export interface ModelSpec {
  readonly name: string;
  /** `--model-namespacing`: the repository the model is in, as the server was given it; other models reach it as `<namespace>::<name>`. */
  readonly namespace?: string;
  readonly version: number;
  readonly platform: string;
  readonly backend: string;
  /** 0: the model does not batch, and request shapes are the dims themselves. */
  readonly maxBatchSize: number;
  /** `model_transaction_policy { decoupled: true }`: zero or more responses per request. */
  readonly isDecoupled: boolean;
  readonly inputs: readonly TensorSpec[];
  readonly outputs: readonly TensorSpec[];
  readonly inputByName: ReadonlyMap<string, TensorSpec>;
  readonly outputByName: ReadonlyMap<string, TensorSpec>;
}
