#!/usr/bin/env node
// Builds the system shared memory addon (native/shm) with npm's own node-gyp; run by `npm install`.
// A failed build is not an install failure: the server then reads and writes regions as files under
// /dev/shm (src/frontends/shared-memory/region-memory.ts) and says so at start-up.
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const addonDir = join(dirname(fileURLToPath(import.meta.url)), '..', 'native', 'shm');
// npm sets npm_config_node_gyp to its bundled node-gyp in lifecycle scripts; beside npm otherwise.
const nodeGyp =
  process.env.npm_config_node_gyp ?? join(dirname(process.execPath), '..', 'lib', 'node_modules', 'npm', 'node_modules', 'node-gyp', 'bin', 'node-gyp.js');
// Node's own headers when it was installed with them (Debian's nodejs, the official tarballs): no download.
const prefix = join(dirname(process.execPath), '..');
const nodedir = existsSync(join(prefix, 'include', 'node', 'node_api.h')) ? [`--nodedir=${prefix}`] : [];

if (process.env.NEREID_SHM_SKIP_BUILD === '1') {
  console.log('nereid: NEREID_SHM_SKIP_BUILD=1, shared memory addon not built (regions will be read and written as files)');
  process.exit(0);
}
try {
  execFileSync(process.execPath, [nodeGyp, 'rebuild', ...nodedir], { cwd: addonDir, stdio: ['ignore', 'ignore', 'pipe'] });
  console.log('nereid: built the shared memory addon (native/shm/build/Release/nereid_shm.node)');
} catch (error) {
  const detail = error.stderr?.toString().split('\n').filter((line) => line.includes('ERR!')).slice(0, 3).join('\n') ?? error.message;
  console.warn(`nereid: could not build the shared memory addon; regions will be read and written as files under /dev/shm\n${detail}`);
}
