import type { DataType } from '../protocol/data-type.js';
import type { Parameters } from '../protocol/parameters.js';
import type { TensorData } from '../protocol/tensor-data.js';

/** A named tensor inside the server: its data type, shape, data and parameters. */
export interface Tensor {
  readonly name: string;
  readonly dataType: DataType;
  readonly shape: readonly number[];
  readonly data: TensorData;
  readonly parameters?: Parameters;
}
