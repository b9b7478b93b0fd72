import { mkdirSync, unlinkSync } from 'node:fs';
import { createRequire } from 'node:module';
import { basename } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { type TransferListItem, Worker } from 'node:worker_threads';

// Nereid's own modules are .ts files when it runs from source (tests, tsx) and .js once built.
const IS_SOURCE = import.meta.url.endsWith('.ts');

/** The URL of a worker module next to `base`, given its name without extension. */
export function workerUrl(name: string, base: string): URL {
  return new URL(`${name}${IS_SOURCE ? '.ts' : '.js'}`, base);
}

/** Worker entry modules bundled to plain JavaScript, by source URL (running from source only). */
const bundles = new Map<string, URL>();

/**
 * From source, a worker module and the TypeScript it imports are bundled once per process into one
 * JavaScript file (by esbuild, which tsx brings), so that every worker starts as fast as a built one.
 * NOTE: a worker does not inherit the tsx loader that `node --import tsx` gave the main thread, and
 * registering tsx in each worker costs about 0.3 s a worker on two cores. The bundle lives in the
 * project's node_modules/.cache, so that its package imports resolve as the source's do, and is
 * removed when the process exits. Never needed once built.
 */
function bundled(url: URL): URL {
  const cached = bundles.get(url.href);
  if (cached !== undefined) return cached;
  const { buildSync } = createRequire(import.meta.url)('esbuild') as typeof import('esbuild');
  const folder = fileURLToPath(new URL('../../node_modules/.cache/nereid-workers/', import.meta.url));
  mkdirSync(folder, { recursive: true });
  const outfile = `${folder}${basename(fileURLToPath(url), '.ts')}-${process.pid}.mjs`;
  buildSync({ entryPoints: [fileURLToPath(url)], outfile, bundle: true, format: 'esm', platform: 'node', packages: 'external', logLevel: 'silent' });
  process.once('exit', () => unlinkSync(outfile));
  const bundle = pathToFileURL(outfile);
  bundles.set(url.href, bundle);
  return bundle;
}

/** Starts a worker thread running `url`; `transferList` moves MessagePorts in `workerData` to it. */
export function startWorker(url: URL, workerData: unknown, transferList: readonly TransferListItem[] = []): Worker {
  return new Worker(IS_SOURCE ? bundled(url) : url, { workerData, transferList: [...transferList] });
}

/** Milliseconds since the epoch with sub-millisecond precision, comparable across threads. */
export const epochMs = (): number => performance.timeOrigin + performance.now();

/** A duration in milliseconds as whole nanoseconds, never negative (statistics). */
export const msToNs = (ms: number): number => Math.max(0, Math.round(ms * 1e6));
