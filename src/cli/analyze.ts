import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { HttpClient } from '../client/index.js';
import { renderAnalyzeHtml } from '../analyze/analyze-html.js';
import { AnalyzeUsageError, analyzeUsage, parseAnalyzeArgs } from '../analyze/analyze-options.js';
import { analyzeCsv, analyzeJson, analyzeTable } from '../analyze/analyze-report.js';
import { applyBestConfig, bestConfigText } from '../analyze/best-config.js';
import { type LocalServer, LocalServerError, startLocalServer } from '../analyze/local-server.js';
import { AnalyzeSetupError, runAnalyze } from '../analyze/run-analyze.js';

/** Where analyze writes: the process's streams, or a test's. */
export interface AnalyzeOutput {
  readonly stdout: { write(text: string): unknown };
  readonly stderr: { write(text: string): unknown };
}

/**
 * `nereid analyze` (src/analyze/): starts Nereid on the repository (or uses `-u`), searches, prints
 * the table, writes the report folder and, with --apply, the model's config.pbtxt. Resolves with the
 * exit code: 0, or 1 when the search could not run or no configuration met the constraints.
 */
export async function analyze(args: readonly string[], output: AnalyzeOutput = process): Promise<number> {
  let options;
  try {
    options = parseAnalyzeArgs(args);
  } catch (error) {
    if (!(error instanceof AnalyzeUsageError)) throw error;
    output.stderr.write(`${error.message}\n`);
    return 1;
  }
  if (options === 'help') {
    output.stdout.write(analyzeUsage());
    return 0;
  }
  const progress = (line: string): void => void output.stderr.write(`${line}\n`);
  let server: LocalServer | undefined;
  let result;
  try {
    if (options.url === undefined) {
      progress(`starting Nereid on '${options.modelRepository}' (explicit model control mode, model '${options.modelName}')`);
      server = await startLocalServer(options.modelRepository!, options.modelName);
    }
    result = await runAnalyze(options, options.url ?? server!.url, progress);
  } catch (error) {
    if (!(error instanceof AnalyzeSetupError || error instanceof LocalServerError)) throw error;
    output.stderr.write(`nereid analyze: ${error.message}\n`);
    return 1;
  } finally {
    await server?.stop();
  }
  output.stdout.write(`\n${analyzeTable(result)}`);
  const bestText = await bestConfigText(result, options.modelRepository);
  if (options.reportDir !== undefined) {
    await mkdir(options.reportDir, { recursive: true });
    await writeFile(join(options.reportDir, 'report.html'), renderAnalyzeHtml(result, bestText));
    await writeFile(join(options.reportDir, 'results.csv'), analyzeCsv(result));
    await writeFile(join(options.reportDir, 'results.json'), analyzeJson(result));
    if (bestText !== undefined) await writeFile(join(options.reportDir, 'best-config.pbtxt'), bestText);
    progress(`report: ${join(options.reportDir, 'report.html')}`);
  }
  if (options.isApply && bestText !== undefined) {
    const backup = await applyBestConfig(options.modelRepository!, options.modelName, bestText);
    progress(`applied: ${join(options.modelRepository!, options.modelName, 'config.pbtxt')}${backup === undefined ? '' : ` (the old one kept as ${backup})`}`);
    if (options.url !== undefined) {
      const client = new HttpClient(options.url);
      try {
        await client.loadModel(options.modelName);
      } finally {
        await client.close();
      }
    }
  }
  return bestText === undefined ? 1 : 0;
}
