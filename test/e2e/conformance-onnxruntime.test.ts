import { fileURLToPath } from 'node:url';
import { runBackendConformance } from '../helpers/backend-conformance.js';

runBackendConformance({
  backend: 'onnxruntime',
  repository: fileURLToPath(new URL('../fixtures/conformance/onnxruntime', import.meta.url)),
  modelFile: 'model.onnx',
  workerKind: 'worker thread',
  crashesOnRequest: false,
  poisonError: "input 'INPUT0': BYTES element 0 holds a NUL byte, which ONNX Runtime string tensors cannot carry",
  // Killing crashy's worker stops its whole execution thread, with every session on it: one thread
  // per model keeps the other models serving meanwhile, as the suite expects.
  serverOptions: { onnxExecutionThreadCount: 8 },
});
