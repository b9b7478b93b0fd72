import { InputDataError } from '../perf/input-data.js';
import type { PerfOptions } from '../perf/perf-options.js';
import { PerfSetupError, runPerf } from '../perf/run-perf.js';
import type { LevelOutcome } from './concurrency-sweep.js';

/**
 * Measures the loaded model at one concurrency with `nereid perf`'s engine (runPerf: windows until
 * three agree, the server's statistics per window). `base` carries the model, server and measurement
 * settings; its range is replaced by this one level.
 */
export async function measureLevel(base: PerfOptions, concurrency: number): Promise<LevelOutcome> {
  let report;
  try {
    report = await runPerf({ ...base, range: { mode: 'concurrency', start: concurrency, end: concurrency, step: 1 } });
  } catch (error) {
    if (error instanceof PerfSetupError || error instanceof InputDataError) return { failure: error.message };
    throw error;
  }
  const step = report.steps[0];
  if (report.failure !== undefined || step === undefined) return { failure: report.failure ?? `no measurement at concurrency ${concurrency}` };
  const { computeInputUs, computeInferUs, computeOutputUs, queueUs } = step.serverTimesUs;
  return {
    step: {
      concurrency,
      throughputInferPerSec: step.throughputInferPerSec,
      latencyUs: step.latencyUs,
      requestCount: step.requestCount,
      isStable: step.isStable,
      serverQueueUs: queueUs,
      serverComputeUs: computeInputUs + computeInferUs + computeOutputUs,
    },
  };
}
