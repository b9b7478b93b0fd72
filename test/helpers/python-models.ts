import { spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { InferResponseJson, TestServer } from './server.js';

/** test/fixtures/python_repository: the Python-backend test models. */
export const PYTHON_FIXTURES = fileURLToPath(new URL('../fixtures/python_repository', import.meta.url));

/** Whether Debian's interpreter (the Python backend's default) can import torch. */
export const HAS_TORCH = spawnSync('/usr/bin/python3', ['-c', 'import torch'], { stdio: 'ignore' }).status === 0;

/**
 * A model repository in a new temporary folder holding copies of the named model folders, so that
 * a test may write into them (hold files, finalize markers). `remove()` deletes it.
 */
export function copyRepository(sources: ReadonlyArray<{ readonly from: string; readonly models: readonly string[] }>): { path: string; remove(): void } {
  const path = mkdtempSync(join(tmpdir(), 'nereid-python-'));
  for (const { from, models } of sources) {
    for (const model of models) cpSync(join(from, model), join(path, model), { recursive: true });
  }
  return { path, remove: () => rmSync(path, { recursive: true, force: true }) };
}

/** POSTs a JSON inference request; resolves with the status and the parsed body. */
export async function inferJson(server: TestServer, model: string, body: unknown): Promise<{ status: number; json: InferResponseJson }> {
  const response = await server.post(`/v2/models/${model}/infer`, body);
  return { status: response.status, json: (await response.json()) as InferResponseJson };
}

/** The `data` of the named output of a JSON response. */
export function outputData(json: InferResponseJson, name: string): unknown[] {
  const output = json.outputs.find((candidate) => candidate.name === name);
  if (output === undefined) throw new Error(`no output '${name}' in ${JSON.stringify(json)}`);
  return output.data!;
}
