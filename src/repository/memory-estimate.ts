import { lstat, readdir } from 'node:fs/promises';
import { join } from 'node:path';

/**
 * How much resident memory one instance costs beyond its model's bytes, and how many bytes of memory
 * one byte of model file becomes in each instance. Measured on the ONNX Runtime backend of the built
 * server with its shared execution threads (`bench/many-models.ts`, 2026-12-01, docs/benchmarks.md):
 * 100 copies of the 10 KB digits MLP took 156 MB of RSS with one instance each and 1,000 copies 372 MB
 * (0.24 MB per model, the file included); a second instance of each of the 1,000 added 104 MB (0.1 MB);
 * `bench/instance-memory.ts` put an instance of the 340 KB MLP at 0.9 MB, the file's weights included.
 * One MiB per instance is the rounded-up figure. A 64 MB MatMul model added 76 MB with one instance and
 * 86 MB more with a second, so each instance holds its own copy of the weights, about 1.2x the file.
 * The figures are for ONNX Runtime; Nereid applies them to every backend (a JavaScript instance, a
 * worker thread of its own, and a Python instance, a process of its own, cost more).
 *
 * NOTE: why an estimate from the files and the config, not the RSS change over the load: loads run in
 * parallel (`--model-load-thread-count`), so the RSS change over one load holds the others' memory
 * too, and the garbage collector and the allocator's free lists move RSS by tens of megabytes on
 * their own. The estimate is known before the load, which is when the budget must decide; it is
 * re-measured by the bench when the instances' cost changes.
 */
export const INSTANCE_OVERHEAD_BYTES = 2 ** 20;
export const FILE_BYTES_FACTOR = 1.25;

/** The estimated memory of one loaded model version: each instance holds the model and its own state. */
export function estimateVersionBytes(fileBytes: number, instanceCount: number): number {
  return Math.round(instanceCount * (fileBytes * FILE_BYTES_FACTOR + INSTANCE_OVERHEAD_BYTES));
}

/**
 * The bytes of every file below `dir` (a version folder). Links are not followed, as a model folder's
 * never lead outside it (repository-scan.ts).
 */
export async function folderBytes(dir: string): Promise<number> {
  const entries = await readdir(dir, { withFileTypes: true }).catch(() => []);
  const sizes = await Promise.all(
    entries.map(async (entry) => {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) return folderBytes(path);
      return entry.isFile() ? (await lstat(path).catch(() => undefined))?.size ?? 0 : 0;
    }),
  );
  return sizes.reduce((sum, size) => sum + size, 0);
}
