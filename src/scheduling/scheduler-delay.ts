/**
 * Triton's testing switch TRITONSERVER_DELAY_SCHEDULER (core src/dynamic_batch_scheduler.cc and
 * src/sequence_batch_scheduler/): a batcher sends nothing until this many requests are queued, then
 * batches as usual for the rest of its life. Triton's QA sets it to make every batch full (qa/L0_batcher,
 * qa/L0_sequence_batcher, qa/L0_rate_limiter). Read with C's atoi, as Triton does: leading blanks, a
 * sign, the digits up to the first other character; nothing readable is 0 (no delay). A negative count
 * becomes a huge size_t in Triton, so the batcher never starts: here, Infinity.
 */
export function schedulerDelayCount(value: string | undefined): number {
  if (value === undefined) return 0;
  const match = /^[ \t\n\v\f\r]*([+-]?)([0-9]*)/.exec(value)!;
  const count = match[2] === '' ? 0 : Number(match[2]);
  return match[1] === '-' && count > 0 ? Number.POSITIVE_INFINITY : count;
}

/** The count from the environment this process started with. */
export const environmentSchedulerDelay = (): number => schedulerDelayCount(process.env.TRITONSERVER_DELAY_SCHEDULER);
