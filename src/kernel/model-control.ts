/**
 * The model repository's load and unload calls as models make them (Triton's model loading API,
 * `pb_utils.load_model`, `unload_model`, `is_model_ready`): the same calls the repository extension
 * makes over HTTP and gRPC, refused in the same words where the control mode forbids them.
 */
export interface ModelControl {
  /** Loads or reloads a model; `parameters` as the repository extension takes them (`config`, `file:<path>`). */
  loadModel(name: string, parameters: Readonly<Record<string, string | Uint8Array>>): Promise<void>;
  unloadModel(name: string, options?: UnloadOptions): Promise<void>;
  /** Whether the model (the given version, else the one served) is ready for requests. */
  isModelReady(name: string, version?: number): boolean;
}

/** How an unload goes beyond the model named (the repository extension's unload parameters). */
export interface UnloadOptions {
  /** Triton's `unload_dependents`: also unload the models an ensemble was loaded with and nothing else needs. */
  readonly unloadDependents?: boolean;
}
