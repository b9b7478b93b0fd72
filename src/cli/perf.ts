import { mkdir, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { InputDataError } from '../perf/input-data.js';
import { PerfUsageError, parsePerfArgs, perfUsage } from '../perf/perf-options.js';
import { renderPlotHtml, renderPlotSvg } from '../perf/plot.js';
import { ProgressDisplay } from '../perf/progress.js';
import { reportCsv, reportJson, reportTable } from '../perf/report.js';
import { PerfSetupError, runPerf } from '../perf/run-perf.js';

async function writeOutput(path: string, text: string): Promise<void> {
  await mkdir(dirname(path), { recursive: true });
  await writeFile(path, text);
}

/**
 * `nereid perf`: measures a model on a running server (src/perf/). Writes progress to stderr, the
 * table to stdout (to stderr when `--json` alone puts JSON on stdout), and the -f, --json and --plot
 * files. Resolves with the exit code: 0, or 1 when requests failed or the run could not start.
 */
export async function perf(args: readonly string[]): Promise<number> {
  let options;
  try {
    options = parsePerfArgs(args);
  } catch (error) {
    if (!(error instanceof PerfUsageError)) throw error;
    process.stderr.write(`${error.message}\n`);
    return 1;
  }
  if (options === 'help') {
    process.stdout.write(perfUsage());
    return 0;
  }
  const progress = new ProgressDisplay(process.stderr, {
    measurementIntervalMs: options.measurementIntervalMs,
    maxTrials: options.maxTrials,
    batchSize: options.batchSize,
    isVerbose: options.isVerbose,
  });
  let report;
  try {
    report = await runPerf(options, progress);
  } catch (error) {
    if (!(error instanceof PerfSetupError || error instanceof InputDataError)) throw error;
    process.stderr.write(`nereid perf: ${error.message}\n`);
    return 1;
  }
  const isJsonOnStdout = options.jsonFile === '-';
  (isJsonOnStdout ? process.stderr : process.stdout).write(`\n${reportTable(report)}`);
  if (isJsonOnStdout) process.stdout.write(reportJson(report));
  else if (options.jsonFile !== undefined) await writeOutput(options.jsonFile, reportJson(report));
  if (options.csvFile !== undefined) await writeOutput(options.csvFile, reportCsv(report));
  if (options.plotFile !== undefined) {
    await writeOutput(options.plotFile, /\.svg$/i.test(options.plotFile) ? renderPlotSvg(report) : renderPlotHtml(report));
  }
  return report.failure === undefined ? 0 : 1;
}
