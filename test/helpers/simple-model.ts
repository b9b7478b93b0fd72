/** The example `simple` model (Triton's add/sub, INT32 [16]) as the tests expect to see it. */

/** Its metadata over HTTP (and through the clients): batch dimension -1 in every shape. */
export const SIMPLE_METADATA = {
  name: 'simple',
  versions: ['1'],
  platform: 'onnxruntime_onnx',
  inputs: [
    { name: 'INPUT0', datatype: 'INT32', shape: [-1, 16] },
    { name: 'INPUT1', datatype: 'INT32', shape: [-1, 16] },
  ],
  outputs: [
    { name: 'OUTPUT0', datatype: 'INT32', shape: [-1, 16] },
    { name: 'OUTPUT1', datatype: 'INT32', shape: [-1, 16] },
  ],
};

/** Its configuration as the JSON a load request's `config` parameter carries, under another name. */
export const simpleConfig = (name: string, maxBatchSize: number) => ({
  name,
  platform: 'onnxruntime_onnx',
  max_batch_size: maxBatchSize,
  input: ['INPUT0', 'INPUT1'].map((input) => ({ name: input, data_type: 'TYPE_INT32', dims: [16] })),
  output: ['OUTPUT0', 'OUTPUT1'].map((output) => ({ name: output, data_type: 'TYPE_INT32', dims: [16] })),
});
