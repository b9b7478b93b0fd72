import assert from 'node:assert/strict';
import fc from 'fast-check';
import { NereidError } from '../../src/kernel/errors.js';
import type { StatusCode } from '../../src/protocol/status-code.js';

/**
 * One property of one parser of client bytes. The suite (parsers.test.ts, server.test.ts) runs each
 * with a few hundred cases; `npm run fuzz` (run.ts) runs the same property with 100,000 (docs/fuzzing.md).
 */
export interface FuzzTarget {
  /** The parser, as docs/fuzzing.md lists it: `KServe JSON`, `gRPC codec`, ... */
  readonly parser: string;
  /** What the property says, e.g. "arbitrary JSON text: success or INVALID_ARG". */
  readonly name: string;
  /** Built on demand, so that a run builds only the properties it runs. */
  readonly property: () => fc.IRawProperty<unknown[]>;
}

/**
 * Runs `parse` and lets it succeed or fail with a NereidError of one of `statuses`; any other exception
 * (a TypeError, a RangeError, an Error of a library) is a bug: it would reach the client as a 500.
 * Returns the result, or undefined after an accepted error.
 */
export function expectClientError<R>(parse: () => R, statuses: readonly StatusCode[] = ['INVALID_ARG']): R | undefined {
  try {
    return parse();
  } catch (error) {
    assertAcceptedError(error, statuses);
    return undefined;
  }
}

/** expectClientError for a parser that settles later (the codecs that yield to the event loop while they decode). */
export async function expectClientErrorAsync<R>(parse: () => Promise<R>, statuses: readonly StatusCode[] = ['INVALID_ARG']): Promise<R | undefined> {
  try {
    return await parse();
  } catch (error) {
    assertAcceptedError(error, statuses);
    return undefined;
  }
}

/** Fails unless `error` is a NereidError of one of `statuses`, with a message. */
export function assertAcceptedError(error: unknown, statuses: readonly StatusCode[]): void {
  if (!(error instanceof NereidError)) {
    assert.fail(`expected a NereidError (${statuses.join(' or ')}), got ${error instanceof Error ? `${error.name}: ${error.message}\n${error.stack}` : String(error)}`);
  }
  assert.ok(statuses.includes(error.status), `expected ${statuses.join(' or ')}, got ${error.status}: ${error.message}`);
  assert.notEqual(error.message, '', 'an error says what was wrong');
}

/** The cases per property: the environment variable `name` (FUZZ_RUNS, FUZZ_E2E_RUNS) when set, else `fallback`. */
export function runsFromEnv(name: string, fallback: number): number {
  const text = process.env[name];
  if (text === undefined || text === '') return fallback;
  const runs = Number(text);
  if (!Number.isSafeInteger(runs) || runs <= 0) throw new Error(`${name} must be a positive integer, got '${text}'`);
  return runs;
}

/**
 * fast-check's parameters for a run: `runs` cases, and the seed and path of FUZZ_SEED and FUZZ_PATH
 * when given (a failure prints both), so that a failing case replays exactly. Without FUZZ_SEED each
 * run draws a new seed, so every CI run tries cases no earlier run tried.
 */
export function runParameters(runs: number): fc.Parameters<unknown[]> {
  const seedText = process.env.FUZZ_SEED;
  const path = process.env.FUZZ_PATH;
  return {
    numRuns: runs,
    ...(seedText !== undefined && seedText !== '' ? { seed: Number(seedText) } : {}),
    ...(path !== undefined && path !== '' ? { path } : {}),
  };
}
