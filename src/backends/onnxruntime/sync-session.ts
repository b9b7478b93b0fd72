/**
 * An ONNX Runtime session called synchronously. NOTE: onnxruntime-node's `InferenceSession.run()`
 * returns a promise but only defers the native call to a setImmediate of its own
 * (dist/backend.js, `OnnxruntimeSessionHandler.run`), so every run costs an event-loop turn and its
 * duration cannot be told from the wait for the loop. The native binding underneath
 * (dist/binding.js, typed in dist/binding.d.ts: "a simple synchronized inference session object
 * wrap") runs in the call. It is not the package's documented entry point, but the package has no
 * exports map, ships its typings, and its own backend is a thin layer over it; what that layer adds
 * for the CPU execution provider (initOrt, the names from the metadata) is done here.
 */
import { binding, initOrt } from 'onnxruntime-node/dist/binding.js';
import type { InferenceSession, Tensor } from 'onnxruntime-node';

export interface SyncSession {
  readonly inputNames: readonly string[];
  readonly outputNames: readonly string[];
  /** Runs the model now, on the calling thread; throws what ONNX Runtime throws. */
  run(feeds: Record<string, Tensor>, fetches: readonly string[]): Record<string, Tensor>;
  release(): void;
}

const NO_RUN_OPTIONS = {};

function isSameList(a: readonly string[], b: readonly string[]): boolean {
  if (a.length !== b.length) return false;
  for (let index = 0; index < a.length; index++) if (a[index] !== b[index]) return false;
  return true;
}

/** Loads the model file now, on the calling thread. */
export function loadSyncSession(modelPath: string, options: InferenceSession.SessionOptions): SyncSession {
  initOrt();
  const session = new binding.InferenceSession();
  session.loadModel(modelPath, options);
  const inputNames = session.inputMetadata.map((metadata) => metadata.name);
  const outputNames = session.outputMetadata.map((metadata) => metadata.name);
  // The fetches of the last run, as the binding takes them: runs in a row mostly want the same outputs.
  let lastFetches: readonly string[] = [];
  let lastWanted: Record<string, null> = {};
  return {
    inputNames,
    outputNames,
    run: (feeds, fetches) => {
      if (!isSameList(fetches, lastFetches)) {
        const wanted: Record<string, null> = {};
        for (const name of fetches) wanted[name] = null;
        lastFetches = [...fetches];
        lastWanted = wanted;
      }
      return session.run(feeds, lastWanted, NO_RUN_OPTIONS) as Record<string, Tensor>;
    },
    release: () => session.dispose(),
  };
}
