import type { ModelConfig } from '../../protocol/gen/model_config_pb.js';
import { NereidError } from '../../kernel/errors.js';
import type { Backend } from '../backend.js';
import { PythonModel, resolveModelFile } from '../python/python-backend.js';
import { PYTHON_RUNTIME_DIR } from '../python/stub-process.js';
import { readStubSettings } from '../python/stub-settings.js';

const DEFAULT_MODEL_FILENAME = 'model.pt';
/** The built-in Python model that runs a TorchScript file (python/nereid_stub/torchscript_model.py). */
const TORCHSCRIPT_MODEL = `${PYTHON_RUNTIME_DIR}nereid_stub/torchscript_model.py`;

/** Refuses what the TorchScript runner does not serve rather than failing on the first request. */
function checkSupported(config: ModelConfig): void {
  if (config.platform !== 'pytorch_libtorch') {
    throw new NereidError(
      'UNSUPPORTED',
      `model '${config.name}': platform '${config.platform}' is not served by Nereid's pytorch backend, which runs TorchScript (platform 'pytorch_libtorch', model.pt)`,
    );
  }
}

/**
 * Triton's PyTorch (LibTorch) backend for `platform: "pytorch_libtorch"`: `model.pt` (TorchScript) is
 * run by a built-in Python model with `torch`, one process per instance, with Triton's input and
 * output naming (INPUT__0 / OUTPUT__0, forward() argument names, or config order). Without torch
 * in the interpreter (python3-torch on Debian) the model fails to load, saying so. TYPE_STRING
 * tensors are List[str] in forward(), as in Triton's libtorch backend.
 */
export const pytorchBackend: Backend = {
  name: 'pytorch',
  defaultModelFilename: DEFAULT_MODEL_FILENAME,
  isModelFileCode: true,
  async loadModel(files, config, spec, context) {
    checkSupported(config);
    await resolveModelFile(files, config, DEFAULT_MODEL_FILENAME);
    const settings = await readStubSettings(config, files.modelDir);
    return new PythonModel({ files, config, spec, context, settings, modelFile: TORCHSCRIPT_MODEL, isOutputAsReturned: false });
  },
};
