import type { Readable } from 'node:stream';
import type { S3Client } from '@aws-sdk/client-s3';
import type { Logger } from '../../logging/logger.js';
import type { S3Location } from './object-storage-path.js';
import type { ObjectStore, StoredObject } from './object-store.js';
import type { S3Settings } from './s3-settings.js';
import { withSdkWarningsLogged } from './sdk-warnings.js';

type S3Sdk = typeof import('@aws-sdk/client-s3');

/** An S3 bucket's prefix through the official AWS SDK, imported on first use only. */
export class S3Store implements ObjectStore {
  readonly #location: S3Location;
  readonly #settings: S3Settings;
  readonly #logger: Logger;
  #sdk: Promise<{ sdk: S3Sdk; client: S3Client }> | undefined;

  /** `logger` gets the SDK's notice about Node versions (see withSdkWarningsLogged). */
  constructor(location: S3Location, settings: S3Settings, logger: Logger) {
    this.#location = location;
    this.#settings = settings;
    this.#logger = logger;
  }

  async *list(): AsyncIterable<StoredObject> {
    const { sdk, client } = await this.#connect();
    const { bucket, prefix } = this.#location;
    for await (const page of sdk.paginateListObjectsV2({ client }, { Bucket: bucket, Prefix: prefix })) {
      for (const object of page.Contents ?? []) {
        yield { key: object.Key?.slice(prefix.length) ?? '', version: object.ETag ?? `${object.Size}:${object.LastModified?.toISOString()}` };
      }
    }
  }

  async read(key: string): Promise<Readable> {
    const { sdk, client } = await this.#connect();
    const response = await client.send(new sdk.GetObjectCommand({ Bucket: this.#location.bucket, Key: this.#location.prefix + key }));
    return response.Body as Readable;
  }

  close(): void {
    void this.#sdk?.then(({ client }) => client.destroy(), () => undefined);
  }

  #connect(): Promise<{ sdk: S3Sdk; client: S3Client }> {
    return (this.#sdk ??= import('@aws-sdk/client-s3').then((sdk) => {
      const { endpoint } = this.#location;
      const { region, credentials, profile } = this.#settings;
      const client = withSdkWarningsLogged(
        () =>
          new sdk.S3Client({
            region,
            ...(endpoint !== undefined ? { endpoint, forcePathStyle: true } : {}),
            ...(credentials !== undefined ? { credentials } : {}),
            ...(profile !== undefined ? { profile } : {}),
            requestHandler: { connectionTimeout: 5_000, requestTimeout: 60_000 },
          }),
        this.#logger,
      );
      return { sdk, client };
    }));
  }
}
