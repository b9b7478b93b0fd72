import type { JsonValue } from '../protocol/json-body.js';

/*
 * How Triton's HTTP front end reads JSON members: TritonJson (triton-inference-server/common,
 * include/triton/common/triton_json.h), whose texts for a member of the wrong kind follow the front
 * end's own ("Unable to parse 'priority': attempt to access JSON non-unsigned-integer as
 * unsigned-integer"). NOTE: TritonJson's errors are INTERNAL, so Triton answers them with a 500
 * (src/http_server.cc HttpCodeFromError); Nereid answers 400 with the same text, as README.md says: a
 * malformed request is no server error (test/e2e/no-internal-errors.test.ts).
 */

export const NON_STRING = 'attempt to access JSON non-string as string';
export const NON_BOOLEAN = 'attempt to access JSON non-boolean as boolean';
export const NON_SIGNED = 'attempt to access JSON non-signed-integer as signed-integer';
export const NON_UNSIGNED = 'attempt to access JSON non-unsigned-integer as unsigned-integer';
export const NON_NUMBER = 'attempt to access JSON non-number as double';

const UINT64_MAX = 2n ** 64n - 1n;

/**
 * A value TritonJson's AsUInt takes, an integer from 0 to 2^64 - 1: a safe integer as a number, a
 * larger one as a bigint; undefined for any other value.
 */
export function jsonUnsigned(value: JsonValue | undefined): number | bigint | undefined {
  if (typeof value === 'bigint') return value < 0n || value > UINT64_MAX ? undefined : value <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(value) : value;
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0 ? value : undefined;
}
