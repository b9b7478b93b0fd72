import type { Readable } from 'node:stream';
import type { ContainerClient } from '@azure/storage-blob';
import type { AzureLocation } from './object-storage-path.js';
import type { ObjectStore, StoredObject } from './object-store.js';
import type { AzureSettings } from './azure-settings.js';

/** An Azure Blob Storage container's prefix through the official SDK, imported on first use only. */
export class AzureStore implements ObjectStore {
  readonly #location: AzureLocation;
  readonly #settings: AzureSettings;
  #container: Promise<ContainerClient> | undefined;

  constructor(location: AzureLocation, settings: AzureSettings) {
    this.#location = location;
    this.#settings = settings;
  }

  async *list(): AsyncIterable<StoredObject> {
    const container = await this.#connect();
    const { prefix } = this.#location;
    for await (const blob of container.listBlobsFlat({ prefix })) {
      yield { key: blob.name.slice(prefix.length), version: blob.properties.etag ?? `${blob.properties.contentLength}:${blob.properties.lastModified.toISOString()}` };
    }
  }

  async read(key: string): Promise<Readable> {
    const container = await this.#connect();
    const response = await container.getBlobClient(this.#location.prefix + key).download();
    return response.readableStreamBody as Readable;
  }

  close(): void {}

  #connect(): Promise<ContainerClient> {
    return (this.#container ??= import('@azure/storage-blob').then((sdk) => {
      const { account, container } = this.#location;
      const { connectionString, accountKey } = this.#settings;
      const service =
        connectionString !== undefined
          ? sdk.BlobServiceClient.fromConnectionString(connectionString)
          : new sdk.BlobServiceClient(
              `https://${account}.blob.core.windows.net`,
              accountKey !== undefined ? new sdk.StorageSharedKeyCredential(account, accountKey) : new sdk.AnonymousCredential(),
            );
      return service.getContainerClient(container);
    }));
  }
}
