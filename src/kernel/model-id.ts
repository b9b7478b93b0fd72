/**
 * Which model the repository means (Triton's ModelIdentifier): its name, and with `--model-namespacing`
 * its namespace, the repository it was found in as the server was given it.
 */
export interface ModelId {
  readonly name: string;
  readonly namespace?: string;
}

/** A model folder the scan found, under its identity. */
export interface ScannedModel extends ModelId {
  /** Its folders: one, or several when repositories without namespaces hold the same name (which fails its load). */
  readonly dirs: string[];
}

/**
 * The key the repository files a model under: its name, or `<namespace>::<name>` with a namespace, as
 * Triton's ModelIdentifier::str() writes it in its messages. A request may name a model by its key.
 */
export function modelKey(id: ModelId): string {
  return id.namespace === undefined ? id.name : `${id.namespace}::${id.name}`;
}
