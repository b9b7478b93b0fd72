import { closeSync, constants, ftruncateSync, openSync, readSync, unlinkSync, writeSync } from 'node:fs';
import type { DataType } from '../protocol/data-type.js';
import { type TensorData, elementCount, readBytesElements, serializeBytes, viewFixedSize } from '../protocol/tensor-data.js';
import { dataTypeByteSize } from '../protocol/data-type.js';
import { ClientError } from './errors.js';

/**
 * A POSIX shared memory object this process creates for the server to map, as tritonclient's
 * `create_shared_memory_region` (tritonclient.utils.shared_memory): `key` is the shm_open name
 * (`/name`), which on Linux is the file /dev/shm/name. Register it with the client's
 * `registerSystemSharedMemory(region, key, byteSize)`.
 *
 * NOTE: the client reads and writes the object through its file (a copy each way, no native addon in
 * the client); the server maps it.
 */
export class SystemSharedMemoryRegion {
  readonly key: string;
  readonly byteSize: number;
  readonly #fd: number;
  readonly #path: string;
  #isClosed = false;

  private constructor(key: string, byteSize: number, fd: number, path: string) {
    this.key = key;
    this.byteSize = byteSize;
    this.#fd = fd;
    this.#path = path;
  }

  /** Creates (or opens and resizes) the object `key` of `byteSize` bytes. */
  static create(key: string, byteSize: number): SystemSharedMemoryRegion {
    const name = key.replace(/^\/+/, '');
    if (name === '' || name.includes('/')) throw new ClientError(`shared memory key '${key}' must be '/' and a name without '/'`);
    if (!Number.isSafeInteger(byteSize) || byteSize < 0) throw new ClientError(`shared memory byte size must be a non-negative integer, got ${byteSize}`);
    const path = `/dev/shm/${name}`;
    // What shm_open(key, O_RDWR | O_CREAT, 0600) does on Linux.
    const fd = openSync(path, constants.O_RDWR | constants.O_CREAT, 0o600);
    ftruncateSync(fd, byteSize);
    return new SystemSharedMemoryRegion(`/${name}`, byteSize, fd, path);
  }

  /** Writes bytes, a typed array or BYTES elements (serialized with their 4-byte lengths) at `offset`. */
  write(data: ArrayBufferView | readonly (string | Uint8Array)[], offset = 0): number {
    const bytes = ArrayBuffer.isView(data)
      ? new Uint8Array(data.buffer, data.byteOffset, data.byteLength)
      : serializeBytes(data.map((element) => (typeof element === 'string' ? new TextEncoder().encode(element) : element)));
    if (offset + bytes.byteLength > this.byteSize) {
      throw new ClientError(`${bytes.byteLength} bytes at offset ${offset} do not fit in shared memory region '${this.key}' of ${this.byteSize} bytes`);
    }
    let done = 0;
    while (done < bytes.byteLength) done += writeSync(this.#fd, bytes, done, bytes.byteLength - done, offset + done);
    return bytes.byteLength;
  }

  /** `byteSize` bytes from `offset`. */
  read(byteSize: number, offset = 0): Uint8Array {
    const bytes = new Uint8Array(byteSize);
    let done = 0;
    while (done < byteSize) {
      const read = readSync(this.#fd, bytes, done, byteSize - done, offset + done);
      if (read === 0) break;
      done += read;
    }
    return bytes;
  }

  /** A tensor of `shape` read from `offset`, as tritonclient's get_contents_as_numpy: BYTES elements or the type's typed array. */
  readTensor(datatype: DataType, shape: readonly number[], offset = 0): TensorData {
    const count = elementCount(shape);
    if (datatype !== 'BYTES') return viewFixedSize(datatype, this.read(count * dataTypeByteSize(datatype), offset));
    const bytes = this.read(this.byteSize - offset, offset);
    const elements: Uint8Array[] = [];
    const stop = readBytesElements(bytes, new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength), elements, 0, count);
    if (typeof stop === 'string' || elements.length < count) {
      throw new ClientError(`malformed BYTES tensor in shared memory region '${this.key}' at offset ${offset}: ${typeof stop === 'string' ? stop : `${elements.length} of ${count} elements`}`);
    }
    return elements;
  }

  /** Closes the descriptor; with `unlink` (default true) removes the object, as destroy_shared_memory_region. */
  close(options: { readonly unlink?: boolean } = {}): void {
    if (this.#isClosed) return;
    this.#isClosed = true;
    closeSync(this.#fd);
    if (options.unlink ?? true) unlinkSync(this.#path);
  }
}
