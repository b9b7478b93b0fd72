/**
 * `npm run fuzz`: every fuzz target of the suite with many more cases, and a report per parser.
 *
 *   FUZZ_RUNS      cases per in-process target (default 100000)
 *   FUZZ_E2E_RUNS  cases per end-to-end target (default 5000)
 *   FUZZ_ONLY      run only the targets whose parser or name contains this text
 *   FUZZ_SEED, FUZZ_PATH  replay a failure: the seed and path that the failure printed
 *
 * Exits with 1 when any property fails. docs/fuzzing.md records a run.
 */
import { performance } from 'node:perf_hooks';
import fc from 'fast-check';
import { type FuzzTarget, runParameters, runsFromEnv } from './fuzz-target.js';
import { type FuzzServer, assertServerServes, serverTargets, startFuzzServer } from './server-targets.js';
import { IN_PROCESS_TARGETS } from './targets/index.js';

interface Result {
  readonly target: FuzzTarget;
  readonly cases: number;
  readonly seconds: number;
  readonly slowestCaseMs: number;
  readonly failure: string | undefined;
}

/** The property with each case timed: the slowest case is the evidence that no input makes a parser hang. */
function timed(property: fc.IRawProperty<unknown[]>): { property: fc.IRawProperty<unknown[]>; slowestMs: () => number } {
  let slowest = 0;
  const record = (start: number): void => {
    slowest = Math.max(slowest, performance.now() - start);
  };
  const wrapped: fc.IRawProperty<unknown[]> = {
    isAsync: () => property.isAsync(),
    generate: (mrng, runId) => property.generate(mrng, runId),
    shrink: (value) => property.shrink(value),
    runBeforeEach: () => property.runBeforeEach(),
    runAfterEach: () => property.runAfterEach(),
    run: (value) => {
      const start = performance.now();
      const outcome = property.run(value);
      if (outcome instanceof Promise) return outcome.finally(() => record(start)) as never;
      record(start);
      return outcome;
    },
  };
  return { property: wrapped, slowestMs: () => slowest };
}

async function runTarget(target: FuzzTarget, runs: number): Promise<Result> {
  const { property, slowestMs } = timed(target.property());
  const start = performance.now();
  let cases = 0;
  let failure: string | undefined;
  try {
    const details = await fc.check(property, runParameters(runs));
    cases = details.numRuns;
    failure = details.failed ? fc.defaultReportMessage(details) : undefined;
  } catch (error) {
    // fast-check throws when FUZZ_PATH does not lead anywhere in this target's cases (a path of another target).
    failure = String(error);
  }
  const seconds = (performance.now() - start) / 1000;
  const result = { target, cases, seconds, slowestCaseMs: slowestMs(), failure };
  const status = failure === undefined ? 'ok' : 'FAILED';
  console.log(`${status.padEnd(6)} ${String(result.cases).padStart(7)} cases ${seconds.toFixed(1).padStart(7)} s  slowest ${result.slowestCaseMs.toFixed(1)} ms  ${target.parser}: ${target.name}`);
  if (failure !== undefined) console.log(failure);
  return result;
}

const only = process.env.FUZZ_ONLY ?? '';
const isSelected = (target: FuzzTarget): boolean => only === '' || `${target.parser}: ${target.name}`.includes(only);

const results: Result[] = [];
const runs = runsFromEnv('FUZZ_RUNS', 100_000);
for (const target of IN_PROCESS_TARGETS.filter(isSelected)) results.push(await runTarget(target, runs));

const e2eRuns = runsFromEnv('FUZZ_E2E_RUNS', 5_000);
let server: FuzzServer | undefined;
const e2eTargets = serverTargets(() => server!).filter(isSelected);
if (e2eTargets.length > 0) {
  server = await startFuzzServer();
  try {
    for (const target of e2eTargets) results.push(await runTarget(target, e2eRuns));
    await assertServerServes(server);
    console.log('ok     the server still answers valid requests over HTTP and gRPC');
  } finally {
    await server.close();
  }
}

/** The table of docs/fuzzing.md: one row per parser. */
const byParser = new Map<string, { properties: number; cases: number; seconds: number; slowestCaseMs: number; failures: number }>();
for (const result of results) {
  const row = byParser.get(result.target.parser) ?? { properties: 0, cases: 0, seconds: 0, slowestCaseMs: 0, failures: 0 };
  row.properties += 1;
  row.cases += result.cases;
  row.seconds += result.seconds;
  row.slowestCaseMs = Math.max(row.slowestCaseMs, result.slowestCaseMs);
  row.failures += result.failure === undefined ? 0 : 1;
  byParser.set(result.target.parser, row);
}
console.log('\n| parser | properties | cases | time (s) | slowest case (ms) | failures |\n|---|---:|---:|---:|---:|---:|');
for (const [parser, row] of byParser) {
  console.log(`| ${parser} | ${row.properties} | ${row.cases.toLocaleString('en-US')} | ${row.seconds.toFixed(1)} | ${row.slowestCaseMs.toFixed(1)} | ${row.failures} |`);
}
process.exitCode = results.some((result) => result.failure !== undefined) ? 1 : 0;
