/**
 * Messages between the main thread and an execution thread (ort-worker.ts), for what happens once per
 * session rather than once per request: loading, unloading, a larger arena. Requests and replies travel
 * through shared memory instead (ort-channel.ts).
 */
import type { InferenceSession } from 'onnxruntime-node';
import type { MessagePort } from 'node:worker_threads';

export interface ThreadInit {
  /** The doorbell (ort-channel.ts BELL_*): rung after every request and every message. */
  readonly bell: SharedArrayBuffer;
  /** Messages to the thread, read synchronously between runs (the thread sleeps in Atomics.wait). */
  readonly controlPort: MessagePort;
  /** Arenas the thread grew for outputs, read synchronously by the main thread before the reply. */
  readonly arenaPort: MessagePort;
  /** The shared memory addon's file, loaded the first time a run's inputs lie in mapped regions. */
  readonly shmAddonPath: string;
}

export type ToThread =
  | {
      readonly type: 'load';
      readonly session: number;
      readonly modelPath: string;
      readonly sessionOptions: InferenceSession.SessionOptions;
      readonly control: SharedArrayBuffer;
      readonly arena: SharedArrayBuffer;
    }
  /** Releases the session; sent once no request of it is in flight. */
  | { readonly type: 'unload'; readonly session: number }
  /** The session's arena from now on (the main thread grew it for a request). */
  | { readonly type: 'arena'; readonly session: number; readonly arena: SharedArrayBuffer }
  /** Exit after the run in progress: with code 0 when the thread hosts no session any more, 1 to crash it (killWorkersForTesting). */
  | { readonly type: 'exit'; readonly code: number };

export type FromThread =
  | { readonly type: 'loaded'; readonly session: number; readonly inputNames: readonly string[]; readonly outputNames: readonly string[] }
  | { readonly type: 'load-error'; readonly session: number; readonly message: string }
  | { readonly type: 'unloaded'; readonly session: number };

/** On the arena port: the arena a session's reply is in (CONTROL_GROWN). */
export interface GrownArena {
  readonly session: number;
  readonly arena: SharedArrayBuffer;
}
