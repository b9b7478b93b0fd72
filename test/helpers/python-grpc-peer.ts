import { execFile, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** The repository's root, where the Python peers (test/interop/) run. */
export const ROOT = fileURLToPath(new URL('../../', import.meta.url));
/** Debian's interpreter, whose dist-packages hold python3-grpcio (not a pyenv or venv python). */
export const PYTHON = '/usr/bin/python3';
export const GRPC_PLUGIN = '/usr/bin/grpc_python_plugin';

/**
 * What a suite whose Python peer speaks gRPC through stubs protoc generates at test time lacks here
 * (`modules` are imported besides grpc and protobuf, `packages` name them), or undefined.
 */
export function missingGrpcPeerTools(modules: readonly string[] = [], packages = 'python3-grpcio / python3-protobuf'): string | undefined {
  const missing: string[] = [];
  if (spawnSync('protoc', ['--version']).status !== 0) missing.push('protoc (protobuf-compiler)');
  if (!existsSync(GRPC_PLUGIN)) missing.push('grpc_python_plugin (protobuf-compiler-grpc)');
  if (spawnSync(PYTHON, ['-I', '-c', `import ${['grpc', 'google.protobuf', ...modules].join(', ')}`]).status !== 0) missing.push(packages);
  return missing.length === 0 ? undefined : `missing ${missing.join(', ')}`;
}

/** The suite's skip reason: CI installs the tools (.ci/run), so there a missing one is a failure, not a skip. */
export const skipWhenMissing = (missing: string | undefined): string | false => (missing !== undefined && !process.env['CI'] ? `${missing}; see .ci/run` : false);

/** execFile without blocking the event loop (the server under test runs in this process), from ROOT. */
export function run(file: string, args: readonly string[], timeoutMs: number): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(file, args, { cwd: ROOT, timeout: timeoutMs, maxBuffer: 16 << 20 }, (error, stdout, stderr) => {
      if (error) reject(new Error(`${file} ${args.join(' ')} failed: ${error.message}\n${stderr}`));
      else resolve(stdout);
    });
  });
}
