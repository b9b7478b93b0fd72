/**
 * Triton's identity backend (`backend: "identity"`, triton-inference-server/identity_backend
 * src/identity.cc), the test model of Triton's QA scripts: each OUTPUT<i> is a copy of INPUT<i>. It
 * reads no model file and completes no configuration. Checks and parameters: identity-config.ts;
 * execution: identity-instance.ts. As Triton's backend with metrics enabled, each model counts the
 * bytes of the inputs it copies in `input_byte_size_counter{model,version}`.
 */
import type { Backend } from '../backend.js';
import { sleepMs } from '../sleep-ms.js';
import { instanceDelayMs, readIdentitySettings } from './identity-config.js';
import { IdentityInstance } from './identity-instance.js';

const METRIC_FAMILY = 'input_byte_size_counter';
const METRIC_DESCRIPTION = 'Cumulative input byte size of all requests received by the model';

export const identityBackend: Backend = {
  name: 'identity',
  defaultModelFilename: '',
  isModelFileCode: false,
  async loadModel(_files, config, spec, context) {
    const settings = readIdentitySettings(config, spec);
    if (settings.creationDelaySec > 0) {
      context.logger.info('identity', `model '${spec.name}': Creation delay is set to: ${settings.creationDelaySec}`);
      await sleepMs(settings.creationDelaySec * 1000);
    }
    const metrics = context.customMetrics?.scope();
    let countInputBytes: ((bytes: number) => void) | undefined;
    if (metrics !== undefined) {
      const family = metrics.createFamily(METRIC_FAMILY, METRIC_DESCRIPTION, 'counter');
      const metric = metrics.createMetric(family, { model: spec.name, version: String(spec.version) }, undefined);
      countInputBytes = (bytes) => metrics.increment(metric, bytes);
    }
    // Triton numbers a model's instances from 0 as it creates them; the delay multiplier uses it.
    let instanceIndex = 0;
    return {
      createInstance: async (instance) =>
        new IdentityInstance({
          name: instance.name,
          spec,
          inputOf: settings.inputOf,
          delayMs: instanceDelayMs(settings, instanceIndex++),
          ...(countInputBytes !== undefined ? { countInputBytes } : {}),
        }),
      unload: async () => metrics?.close(),
    };
  },
};
