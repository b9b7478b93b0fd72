#!/usr/bin/env node
// Builds Nereid's N-API addons with npm's own node-gyp; run by `npm install`. A failed build is not an
// install failure: each addon has a fallback in JavaScript, which the server names at start-up or load.
// - native/shm, system shared memory: without it, regions are read and written as files under /dev/shm
//   (src/frontends/shared-memory/region-memory.ts). NEREID_SHM_SKIP_BUILD=1 skips it.
// - native/fil, the fil backend's evaluator: without it, trees are evaluated in JavaScript
//   (src/backends/fil/native-forest.ts). NEREID_FIL_SKIP_BUILD=1 skips it.
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const nativeDir = join(dirname(fileURLToPath(import.meta.url)), '..', 'native');
// npm sets npm_config_node_gyp to its bundled node-gyp in lifecycle scripts; beside npm otherwise.
const nodeGyp =
  process.env.npm_config_node_gyp ?? join(dirname(process.execPath), '..', 'lib', 'node_modules', 'npm', 'node_modules', 'node-gyp', 'bin', 'node-gyp.js');
// Node's own headers when it was installed with them (Debian's nodejs, the official tarballs): no download.
const prefix = join(dirname(process.execPath), '..');
const nodedir = existsSync(join(prefix, 'include', 'node', 'node_api.h')) ? [`--nodedir=${prefix}`] : [];

const ADDONS = [
  { folder: 'shm', file: 'nereid_shm.node', what: 'the shared memory addon', skipEnv: 'NEREID_SHM_SKIP_BUILD', fallback: 'regions will be read and written as files under /dev/shm' },
  { folder: 'fil', file: 'nereid_fil.node', what: "the fil backend's native evaluator", skipEnv: 'NEREID_FIL_SKIP_BUILD', fallback: 'tree models will be evaluated in JavaScript' },
];

for (const addon of ADDONS) {
  if (process.env[addon.skipEnv] === '1') {
    console.log(`nereid: ${addon.skipEnv}=1, ${addon.what} not built (${addon.fallback})`);
    continue;
  }
  try {
    execFileSync(process.execPath, [nodeGyp, 'rebuild', ...nodedir], { cwd: join(nativeDir, addon.folder), stdio: ['ignore', 'ignore', 'pipe'] });
    console.log(`nereid: built ${addon.what} (native/${addon.folder}/build/Release/${addon.file})`);
  } catch (error) {
    const detail = error.stderr?.toString().split('\n').filter((line) => line.includes('ERR!')).slice(0, 3).join('\n') ?? error.message;
    console.warn(`nereid: could not build ${addon.what}; ${addon.fallback}\n${detail}`);
  }
}
