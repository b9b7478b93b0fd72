/**
 * Triton's repeat backend (`backend: "repeat"`, triton-inference-server/repeat_backend
 * src/repeat.cc), the decoupled test model of Triton's QA scripts (repeat_int32 in qa/L0_decoupled,
 * qa/L0_grpc_state_cleanup, qa/L0_trace): one response per element of IN, each after its DELAY, the
 * request released after WAIT. It reads no model file and completes no configuration. Checks:
 * repeat-config.ts; execution: repeat-instance.ts.
 */
import type { Backend } from '../backend.js';
import { checkRepeatConfig } from './repeat-config.js';
import { RepeatInstance } from './repeat-instance.js';

export const repeatBackend: Backend = {
  name: 'repeat',
  defaultModelFilename: '',
  isModelFileCode: false,
  async loadModel(_files, config, spec) {
    checkRepeatConfig(config, spec);
    return {
      createInstance: async (instance) => new RepeatInstance({ name: instance.name, spec }),
      unload: async () => {},
    };
  },
};
