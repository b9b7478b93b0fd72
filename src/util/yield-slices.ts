/**
 * How many elements a loop over client data handles between two yields to the event loop: 65,536 BYTES
 * elements take a few milliseconds, so one request of millions of them lets others in every few ms.
 */
export const ELEMENTS_PER_SLICE = 65_536;

/** Lets the callbacks waiting on the event loop run, I/O included (setImmediate: a microtask would not). */
export function yieldToEventLoop(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/** Calls `body` for each index below `count`, yielding to the event loop after every ELEMENTS_PER_SLICE of them. */
export async function forEachSliced(count: number, body: (index: number) => void): Promise<void> {
  for (let start = 0; start < count; start += ELEMENTS_PER_SLICE) {
    if (start > 0) await yieldToEventLoop();
    const end = Math.min(count, start + ELEMENTS_PER_SLICE);
    for (let index = start; index < end; index++) body(index);
  }
}
