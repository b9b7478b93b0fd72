/**
 * Triton's square backend (`backend: "square"`, triton-inference-server/square_backend src/square.cc),
 * the decoupled test model of Triton's QA scripts (square_int32 in qa/L0_decoupled,
 * qa/L0_response_statistics, ...): a request with IN = n gets n responses, each with OUT = n, then
 * ends with no response of its own. It reads no model file and completes no configuration. Checks
 * and parameters: square-config.ts; execution: square-instance.ts.
 */
import type { Backend } from '../backend.js';
import { readSquareSettings } from './square-config.js';
import { SquareInstance } from './square-instance.js';

export const squareBackend: Backend = {
  name: 'square',
  defaultModelFilename: '',
  isModelFileCode: false,
  async loadModel(_files, config, spec, context) {
    const settings = readSquareSettings(config, spec, (message) => context.logger.info('square', `model '${spec.name}': ${message}`));
    return {
      createInstance: async (instance) => new SquareInstance({ name: instance.name, spec, settings }),
      unload: async () => undefined,
    };
  },
};
