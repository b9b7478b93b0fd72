import type { Backend } from './backend.js';
import { ENSEMBLE_PLATFORM, ensembleBackend } from './ensemble/ensemble-backend.js';
import { filBackend } from './fil/fil-backend.js';
import { identityBackend } from './identity/identity-backend.js';
import { javascriptBackend } from './javascript/javascript-backend.js';
import { onnxRuntimeBackend } from './onnxruntime/onnxruntime-backend.js';
import { pythonBackend } from './python/python-backend.js';
import { pytorchBackend } from './pytorch/pytorch-backend.js';
import { repeatBackend } from './repeat/repeat-backend.js';
import { squareBackend } from './square/square-backend.js';

/** Every backend, by its config `backend:` name. */
export const BACKENDS: ReadonlyMap<string, Backend> = new Map([
  [onnxRuntimeBackend.name, onnxRuntimeBackend],
  [javascriptBackend.name, javascriptBackend],
  [pythonBackend.name, pythonBackend],
  [pytorchBackend.name, pytorchBackend],
  [filBackend.name, filBackend],
  [identityBackend.name, identityBackend],
  [repeatBackend.name, repeatBackend],
  [squareBackend.name, squareBackend],
]);

/** Config `platform:` values and the backend that serves each (Triton's platform → backend mapping). */
export const PLATFORMS: ReadonlyMap<string, string> = new Map([
  ['onnxruntime_onnx', 'onnxruntime'],
  ['pytorch_libtorch', 'pytorch'],
]);

/**
 * The backend for a config: its `backend`, else the one its `platform` maps to; ensembles (platform
 * 'ensemble', no backend) get the ensemble scheduler's. Undefined when none is known.
 */
export function findBackend(backend: string, platform: string): Backend | undefined {
  if (backend === '' && platform === ENSEMBLE_PLATFORM) return ensembleBackend;
  return BACKENDS.get(backend || PLATFORMS.get(platform) || '');
}
