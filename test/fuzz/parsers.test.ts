import { test } from 'node:test';
import fc from 'fast-check';
import { runParameters, runsFromEnv } from './fuzz-target.js';
import { IN_PROCESS_TARGETS } from './targets/index.js';

/*
 * Every in-process fuzz target, with few cases each (FUZZ_RUNS to change): a few seconds for the
 * whole file. `npm run fuzz` runs the same properties with 100,000 cases each (docs/fuzzing.md).
 */
const runs = runsFromEnv('FUZZ_RUNS', 300);

for (const target of IN_PROCESS_TARGETS) {
  test(`${target.parser}: ${target.name}`, async () => {
    await fc.assert(target.property(), runParameters(runs));
  });
}
