import type { Backend } from '../backend.js';
import { planEnsemble } from './ensemble-plan.js';
import { EnsembleScheduler } from './ensemble-scheduler.js';

/** Config `platform:` of ensembles, which Triton serves without a backend. */
export const ENSEMBLE_PLATFORM = 'ensemble';

/**
 * Ensembles: no instances and no model file; loading resolves the steps against the composing
 * models (loading them first in EXPLICIT mode), and requests run through the EnsembleScheduler.
 * An ensemble with a decoupled step is decoupled itself (Triton fills its model_transaction_policy).
 */
export const ensembleBackend: Backend = {
  name: 'ensemble',
  defaultModelFilename: '',
  isModelFileCode: false,
  async loadModel(_files, config, spec, context) {
    const steps = await planEnsemble(config, spec, context.requireModel);
    const maxInflightRequests = config.schedulingChoice.case === 'ensembleScheduling' ? config.schedulingChoice.value.maxInflightRequests : 0;
    return {
      isDecoupled: steps.some((step) => step.isDecoupled),
      createInstance: () => Promise.reject(new Error('an ensemble has no instances')),
      createScheduler: (statistics) => new EnsembleScheduler({ spec, steps, caller: context.caller, statistics, maxInflightRequests }),
      unload: async () => {},
    };
  },
};
