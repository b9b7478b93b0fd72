import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { BlobServiceClient } from '@azure/storage-blob';

const AZURITE_BLOB = fileURLToPath(new URL('../../node_modules/.bin/azurite-blob', import.meta.url));

/** The tests' own storage account (a key of their own makes a leak findable). */
export const AZURE_ACCOUNT = 'nereidtest';
export const AZURE_KEY = Buffer.from('nereid-azure-test-key-0123456789abcdef').toString('base64');

/** Microsoft's Azurite (Blob service only, in memory, no telemetry) on a free port of 127.0.0.1. */
export interface TestAzurite {
  /** A connection string for the tests' account, with `key` (the right one unless given). */
  connectionString(key?: string): string;
  createContainer(name: string): Promise<void>;
  /** Uploads every file below `dir` as blobs named `prefix` + its path. */
  uploadFolder(container: string, prefix: string, dir: string): Promise<void>;
  put(container: string, name: string, body: string): Promise<void>;
  close(): Promise<void>;
}

export async function startAzurite(): Promise<TestAzurite> {
  const child: ChildProcess = spawn(AZURITE_BLOB, ['--blobHost', '127.0.0.1', '--blobPort', '0', '--inMemoryPersistence', '--disableTelemetry', '--silent', '--skipApiVersionCheck'], {
    env: { ...process.env, AZURITE_ACCOUNTS: `${AZURE_ACCOUNT}:${AZURE_KEY}` },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = once(child, 'exit');
  const listening = /successfully listens on http:\/\/127\.0\.0\.1:(\d+)/;
  while (!listening.test(output)) await Promise.race([once(child.stdout!, 'data'), exited.then(() => Promise.reject(new Error(`azurite exited:\n${output}`)))]);
  const port = Number(listening.exec(output)![1]);
  const connectionString = (key = AZURE_KEY): string =>
    `DefaultEndpointsProtocol=http;AccountName=${AZURE_ACCOUNT};AccountKey=${key};BlobEndpoint=http://127.0.0.1:${port}/${AZURE_ACCOUNT};`;
  const service = BlobServiceClient.fromConnectionString(connectionString());
  const put = async (container: string, name: string, body: string | Buffer): Promise<void> => {
    await service.getContainerClient(container).getBlockBlobClient(name).upload(body, Buffer.byteLength(body));
  };
  return {
    connectionString,
    createContainer: async (name) => {
      await service.getContainerClient(name).create();
    },
    uploadFolder: async (container, prefix, dir) => {
      const walk = (folder: string): string[] =>
        readdirSync(folder).flatMap((name) => (statSync(join(folder, name)).isDirectory() ? walk(join(folder, name)) : [join(folder, name)]));
      for (const file of walk(dir)) await put(container, `${prefix}${relative(dir, file)}`, readFileSync(file));
    },
    put,
    close: async () => {
      if (child.exitCode !== null) return;
      child.kill('SIGTERM');
      await exited;
    },
  };
}
