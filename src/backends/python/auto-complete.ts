import type { ModelConfig } from '../../protocol/gen/model_config_pb.js';
import { modelConfigFromJson, modelConfigToTritonJson } from '../../config/model-config-json.js';
import { NereidError } from '../../kernel/errors.js';
import type { Logger } from '../../logging/logger.js';
import { FrameWriter } from './frame-codec.js';
import { Kind } from './stub-protocol.js';
import { StubProcess, describeExit } from './stub-process.js';
import type { StubSettings } from './stub-settings.js';

export interface AutoCompleteOptions {
  readonly modelFile: string;
  readonly config: ModelConfig;
  readonly settings: StubSettings;
  readonly logger: Logger;
}

/**
 * Triton's Python auto-complete: a throw-away process imports model.py and, when TritonPythonModel
 * has a static `auto_complete_config`, calls it with a pb_utils.ModelConfig holding the config as
 * Triton prints it; the config it returns is read back as the model's configuration. A process that
 * has not answered within the stub timeout (STUB_TIMEOUT_SECONDS) is killed.
 */
export function autoCompletePythonConfig({ modelFile, config, settings, logger }: AutoCompleteOptions): Promise<ModelConfig> {
  const label = `model '${config.name}'`;
  return new Promise<ModelConfig>((resolve, reject) => {
    let isAnswered = false;
    const stub: StubProcess = new StubProcess({
      settings,
      mode: 'auto-complete',
      modelFile,
      label,
      logger,
      onMessage: (kind, reader) => {
        isAnswered = true;
        try {
          if (kind === Kind.Config) resolve(modelConfigFromJson(reader.str(), `the config auto_complete_config returned for ${label}`));
          else reject(new NereidError('INVALID_ARG', `${label}: ${reader.str()}`));
        } catch (error) {
          reject(error);
        }
      },
      onExit: (exit) => {
        clearTimeout(timer);
        if (isAnswered) return;
        const ending = isTimedOut ? `answered nothing within ${settings.healthTimeoutMs / 1000} s (STUB_TIMEOUT_SECONDS) and was killed` : describeExit(exit);
        reject(new NereidError('INVALID_ARG', `${label}: the Python process for auto_complete_config ${ending}${stub.stderrTail === '' ? '' : `:\n${stub.stderrTail}`}`));
      },
    });
    // A model.py whose import never returns would hold the load forever.
    let isTimedOut = false;
    const timer = setTimeout(() => {
      isTimedOut = true;
      stub.kill();
    }, settings.healthTimeoutMs);
    stub.send(Kind.AutoComplete, new FrameWriter().str(modelConfigToTritonJson(config)));
  });
}
