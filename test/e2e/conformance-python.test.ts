import { fileURLToPath } from 'node:url';
import { runBackendConformance } from '../helpers/backend-conformance.js';

runBackendConformance({
  backend: 'python',
  repository: fileURLToPath(new URL('../fixtures/conformance/python', import.meta.url)),
  modelFile: 'model.py',
  workerKind: 'Python process',
  crashesOnRequest: true,
  outputsAsReturned: "Triton's Python backend passes an output on with the data type and shape the model gave it",
  poisonError: "input 'INPUT0': BYTES element 0 holds a NUL byte, which this model refuses",
});
