import type { Readable } from 'node:stream';

/** One object (blob) of a repository: its name below the repository's prefix and what changes when its content does. */
export interface StoredObject {
  readonly key: string;
  /** The ETag (or, without one, size and modification time). */
  readonly version: string;
}

/**
 * A repository in object storage, as the mirror reads it. Every method may throw the store's own
 * error; the mirror turns it into a message without secrets.
 */
export interface ObjectStore {
  /** Every object below the repository's prefix, names relative to it (folder markers included; the mirror skips them). */
  list(): AsyncIterable<StoredObject>;
  /** The content of the object `key` (relative to the prefix). */
  read(key: string): Promise<Readable>;
  close(): void;
}
