/**
 * Runs `nereid perf` (the build in dist/) as its own process for a benchmark and reads its JSON
 * report; its progress lines pass through to stderr.
 */
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { PerfReport } from '../src/perf/report.js';

const MAIN = fileURLToPath(new URL('../dist/cli/main.js', import.meta.url));

export function runNereidPerf(args: readonly string[]): Promise<PerfReport> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [MAIN, 'perf', ...args, '--json'], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
      process.stderr.write(chunk);
    });
    child.once('error', reject);
    child.once('exit', (code) => (code === 0 ? resolve(JSON.parse(stdout) as PerfReport) : reject(new Error(`nereid perf exited with ${code}:\n${stderr}`))));
  });
}

/** Writes `--input-data` for one input of raw little-endian bytes (perf_analyzer's {"b64": ...} form) and returns its path. */
export function writeInputData(path: string, inputName: string, bytes: Uint8Array): string {
  writeFileSync(path, JSON.stringify({ data: [{ [inputName]: { b64: Buffer.from(bytes).toString('base64') } }] }));
  return path;
}
