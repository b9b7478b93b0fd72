import { setTimeout as sleep } from 'node:timers/promises';
import type { DashboardSampler } from './dashboard-sampler.js';

/**
 * Server-sent events (https://html.spec.whatwg.org/multipage/server-sent-events.html): a frame at once,
 * then one every `intervalMs` until `signal` aborts. One timer per open stream, none once it closes.
 */
export async function* dashboardEvents(sampler: DashboardSampler, intervalMs: number, signal: AbortSignal): AsyncGenerator<Uint8Array> {
  yield Buffer.from(`retry: ${intervalMs * 2}\n\n`);
  while (!signal.aborted) {
    yield Buffer.from(`event: frame\ndata: ${JSON.stringify(await sampler.frame())}\n\n`);
    try {
      await sleep(intervalMs, undefined, { signal });
    } catch {
      return;
    }
  }
}
