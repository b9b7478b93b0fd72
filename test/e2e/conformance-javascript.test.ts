import { fileURLToPath } from 'node:url';
import { runBackendConformance } from '../helpers/backend-conformance.js';

runBackendConformance({
  backend: 'javascript',
  repository: fileURLToPath(new URL('../fixtures/conformance/javascript', import.meta.url)),
  modelFile: 'model.js',
  workerKind: 'worker thread',
  crashesOnRequest: true,
  poisonError: "input 'INPUT0': BYTES element 0 holds a NUL byte, which this model refuses",
});
