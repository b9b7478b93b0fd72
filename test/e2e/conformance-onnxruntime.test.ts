import { fileURLToPath } from 'node:url';
import { runBackendConformance } from '../helpers/backend-conformance.js';

runBackendConformance({
  backend: 'onnxruntime',
  repository: fileURLToPath(new URL('../fixtures/conformance/onnxruntime', import.meta.url)),
  modelFile: 'model.onnx',
  workerKind: 'worker thread',
  crashesOnRequest: false,
  poisonError: "input 'INPUT0': BYTES element 0 holds a NUL byte, which ONNX Runtime string tensors cannot carry",
});
