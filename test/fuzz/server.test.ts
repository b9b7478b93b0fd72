import { after, before, test } from 'node:test';
import fc from 'fast-check';
import { runParameters, runsFromEnv } from './fuzz-target.js';
import { type FuzzServer, assertServerServes, serverTargets, startFuzzServer } from './server-targets.js';

/*
 * The real server, started once, takes arbitrary and mutated HTTP requests and gRPC messages (a few
 * dozen per target here, FUZZ_E2E_RUNS to change; `npm run fuzz` sends thousands): no 500, no crash,
 * and it still answers valid requests afterwards.
 */
const runs = runsFromEnv('FUZZ_E2E_RUNS', 60);

let target: FuzzServer;
before(async () => {
  target = await startFuzzServer();
});
after(() => target.close());

for (const fuzzTarget of serverTargets(() => target)) {
  test(`${fuzzTarget.parser}: ${fuzzTarget.name}`, async () => {
    await fc.assert(fuzzTarget.property(), runParameters(runs));
  });
}

test('after every target, the server still answers valid requests over HTTP and gRPC', () => assertServerServes(target));
