import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { CreateBucketCommand, DeleteObjectCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';

/** The parts of s3rver (an S3 API server on the file system, npm `s3rver`, untyped) the tests use. */
interface S3rverInstance {
  run(): Promise<{ port: number }>;
  close(): Promise<void>;
}
interface S3rverAccount {
  createKeyPair(accessKeyId: string, secretAccessKey: string): void;
}

const require = createRequire(import.meta.url);
const S3rver = require('s3rver') as new (options: Record<string, unknown>) => S3rverInstance;
// s3rver knows one account; its key pair is S3RVER/S3RVER. A key pair of the tests' own makes a leak findable.
const { DUMMY_ACCOUNT } = require('s3rver/lib/models/account') as { DUMMY_ACCOUNT: S3rverAccount };

export const S3_KEY_ID = 'NEREIDTESTKEY0000001';
export const S3_SECRET = 'nereid-test-secret-0123456789abcdef';
DUMMY_ACCOUNT.createKeyPair(S3_KEY_ID, S3_SECRET);

/** A real S3 API server on 127.0.0.1 with a client to fill its buckets. */
export interface TestS3Server {
  /** `host:port`, as `s3://host:port/bucket/path` names it. */
  readonly hostPort: string;
  createBucket(bucket: string): Promise<void>;
  /** Uploads every file below `dir` under `prefix`. */
  uploadFolder(bucket: string, prefix: string, dir: string): Promise<void>;
  put(bucket: string, key: string, body: string | Uint8Array): Promise<void>;
  remove(bucket: string, key: string): Promise<void>;
  /** Stops the server (again: nothing). */
  close(): Promise<void>;
}

export async function startS3Server(): Promise<TestS3Server> {
  const directory = mkdtempSync(join(tmpdir(), 'nereid-s3rver-'));
  const server = new S3rver({ address: '127.0.0.1', port: 0, silent: true, directory });
  const { port } = await server.run();
  const client = new S3Client({
    endpoint: `http://127.0.0.1:${port}`,
    forcePathStyle: true,
    region: 'us-east-1',
    credentials: { accessKeyId: S3_KEY_ID, secretAccessKey: S3_SECRET },
    // s3rver predates the checksums the SDK sends by default since 2025.
    requestChecksumCalculation: 'WHEN_REQUIRED',
  });
  let isClosed = false;
  const put = async (bucket: string, key: string, body: string | Uint8Array): Promise<void> => {
    await client.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: body }));
  };
  return {
    hostPort: `127.0.0.1:${port}`,
    createBucket: async (bucket) => {
      await client.send(new CreateBucketCommand({ Bucket: bucket }));
    },
    uploadFolder: async (bucket, prefix, dir) => {
      const walk = (folder: string): string[] =>
        readdirSync(folder).flatMap((name) => (statSync(join(folder, name)).isDirectory() ? walk(join(folder, name)) : [join(folder, name)]));
      for (const file of walk(dir)) await put(bucket, `${prefix}${relative(dir, file)}`, readFileSync(file));
    },
    put,
    remove: async (bucket, key) => {
      await client.send(new DeleteObjectCommand({ Bucket: bucket, Key: key }));
    },
    close: async () => {
      if (isClosed) return;
      isClosed = true;
      client.destroy();
      await server.close();
      rmSync(directory, { recursive: true, force: true });
    },
  };
}
