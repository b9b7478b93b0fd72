import type { Backend } from './backend.js';
import { onnxRuntimeBackend } from './onnxruntime/onnxruntime-backend.js';

/** Every backend, by its config `backend:` name. */
export const BACKENDS: ReadonlyMap<string, Backend> = new Map([[onnxRuntimeBackend.name, onnxRuntimeBackend]]);

/** Config `platform:` values and the backend that serves each (Triton's platform → backend mapping). */
export const PLATFORMS: ReadonlyMap<string, string> = new Map([['onnxruntime_onnx', 'onnxruntime']]);

/**
 * The backend for a config: its `backend`, else the one its `platform` maps to.
 * Undefined when neither names a backend Nereid has.
 */
export function findBackend(backend: string, platform: string): Backend | undefined {
  return BACKENDS.get(backend || PLATFORMS.get(platform) || '');
}
