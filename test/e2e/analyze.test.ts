import assert from 'node:assert/strict';
import { cpSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { after, before, describe, test } from 'node:test';
import { type Browser, chromium } from 'playwright-core';
import type { AnalyzeResult } from '../../src/analyze/run-analyze.js';
import { runConfigLabel, runConfigOf } from '../../src/analyze/run-config.js';
import { analyze } from '../../src/cli/analyze.js';
import { HttpClient } from '../../src/client/index.js';
import { modelConfigToProtoJson } from '../../src/config/model-config-json.js';
import { parseModelConfig } from '../../src/config/parse-model-config.js';
import { parsePerfArgs, type PerfOptions } from '../../src/perf/perf-options.js';
import { runPerf } from '../../src/perf/run-perf.js';
import { CHROMIUM, skipBrowser } from '../helpers/chromium.js';
import { EXAMPLES, FIXTURES, type TestServer, startTestServer } from '../helpers/server.js';


/** Runs `nereid analyze` in this process, its output captured. */
async function runAnalyze(args: readonly string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  const code = await analyze(args, { stdout: { write: (text: string) => (stdout += text) }, stderr: { write: (text: string) => (stderr += text) } });
  return { code, stdout, stderr };
}

/** A small budget: short single windows, concurrency up to 4, two instance counts, batch sizes up to 8. */
const SMALL_BUDGET = [
  '-p', '100',
  '-r', '1',
  '--run-config-search-max-concurrency', '4',
  '--run-config-search-max-instance-count', '2',
  '--run-config-search-max-model-batch-size', '8',
  '--run-config-search-max-configs', '5',
];

describe('nereid analyze', { timeout: 180_000 }, () => {
  let repository: string;
  let reportDir: string;
  let server: TestServer;
  let result: AnalyzeResult;
  let output: { code: number; stdout: string; stderr: string };
  const originalDigits = readFileSync(join(EXAMPLES, 'digits', 'config.pbtxt'), 'utf8');

  before(async () => {
    repository = mkdtempSync(join(tmpdir(), 'nereid-analyze-repo-'));
    reportDir = mkdtempSync(join(tmpdir(), 'nereid-analyze-report-'));
    cpSync(join(EXAMPLES, 'digits'), join(repository, 'digits'), { recursive: true });
    cpSync(join(FIXTURES, 'nobatch_fp32'), join(repository, 'nobatch_fp32'), { recursive: true });
    server = await startTestServer({ modelRepositories: [repository], modelControlMode: 'explicit', startupModels: ['digits'] });
    output = await runAnalyze(['-m', 'digits', '-u', server.url, '--model-repository', repository, '--latency-budget-ms', '2000', '--report', reportDir, '--apply', ...SMALL_BUDGET]);
    result = JSON.parse(readFileSync(join(reportDir, 'results.json'), 'utf8')) as AnalyzeResult;
  });
  after(async () => {
    await server?.close();
    rmSync(repository, { recursive: true, force: true });
    rmSync(reportDir, { recursive: true, force: true });
  });

  test('finishes within its budget, and the best is a configuration it measured that meets the budget', () => {
    assert.equal(output.code, 0, output.stderr);
    assert.ok(result.configs.length >= 2 && result.configs.length <= 5, `${result.configs.length} configurations`);
    const own = result.configs[0]!;
    assert.ok(own.isDefault);
    assert.equal(own.label, 'i2 b32 d200', 'the model\'s own: 2 instances (the onnxruntime default on CPU), batching up to 32, 200 µs');
    const best = result.configs.find((config) => config.label === result.bestLabel)!;
    assert.ok(best !== undefined, `best '${result.bestLabel}' was measured`);
    const point = best.steps.find((step) => step.concurrency === best.operatingConcurrency)!;
    assert.ok(point.latencyUs.p99Us <= 2000 * 1000 && point.throughputInferPerSec > 0);
    assert.match(output.stdout, new RegExp(`${best.label.replace(/[/]/g, '\\/')}.* \\*`));
    assert.match(output.stderr, /^\[1\] the model's own configuration \(i2 b32 d200\)$/m);
  });

  test('the best beats or equals the model\'s own configuration on the objective, as reported', () => {
    const operating = (label: string | undefined) => {
      const config = result.configs.find((c) => c.label === label)!;
      return config.steps.find((step) => step.concurrency === config.operatingConcurrency);
    };
    const own = operating(result.configs[0]!.label);
    const best = operating(result.bestLabel)!;
    if (own !== undefined) assert.ok(best.throughputInferPerSec >= own.throughputInferPerSec);
    assert.match((result as AnalyzeResult & { summary: string }).summary, /(the default's throughput at p99 ≤ 2000 ms|is the best measured)/);
  });

  test('the report\'s numbers agree with each other: CSV rows, the front, the operating points', () => {
    const csv = readFileSync(join(reportDir, 'results.csv'), 'utf8').trimEnd().split('\n').slice(1).map((line) => line.split(','));
    assert.equal(csv.length, result.configs.reduce((total, config) => total + config.steps.length, 0));
    for (const row of csv) {
      const config = result.configs.find((c) => c.label === row[0])!;
      const step = config.steps.find((s) => s.concurrency === Number(row[8]))!;
      assert.ok(Math.abs(Number(row[9]) - step.throughputInferPerSec) < 0.01);
    }
    assert.equal(csv.filter((row) => row[2] === 'yes').length, 1, 'one best row');
    assert.ok(result.front.length >= 1);
    for (const point of result.front) {
      const step = result.configs.find((c) => c.label === point.label)!.steps.find((s) => s.concurrency === point.concurrency)!;
      assert.equal(point.throughputInferPerSec, step.throughputInferPerSec);
      const beaten = result.configs.flatMap((c) => c.steps).some((other) => other.throughputInferPerSec > step.throughputInferPerSec && other.latencyUs.p99Us < step.latencyUs.p99Us);
      assert.equal(beaten, false, `${point.label}@${point.concurrency} is not beaten on both`);
    }
  });

  test('--apply writes the best into config.pbtxt with a backup, and nereid perf measures the applied model', async () => {
    const best = result.configs.find((config) => config.label === result.bestLabel)!;
    const folder = join(repository, 'digits');
    const backups = readdirSync(folder).filter((name) => /^config\.pbtxt\.\d{8}T\d{6}\.bak$/.test(name));
    assert.equal(backups.length, 1);
    assert.equal(readFileSync(join(folder, backups[0]!), 'utf8'), originalDigits);
    const written = readFileSync(join(folder, 'config.pbtxt'), 'utf8');
    assert.equal(written, readFileSync(join(reportDir, 'best-config.pbtxt'), 'utf8'));
    assert.match(written, /^# Written by nereid analyze on \d{4}-\d\d-\d\d: /);
    assert.equal(runConfigLabel(runConfigOf(modelConfigToProtoJson(parseModelConfig(written, 'config.pbtxt')))), best.label);
    const client = new HttpClient(server.url);
    try {
      assert.equal(runConfigLabel(runConfigOf(await client.modelConfig('digits'))), best.label, 'the server reloaded the applied file');
    } finally {
      await client.close();
    }
    const options = parsePerfArgs(['-m', 'digits', '-u', server.url, '-p', '100', '-r', '1', '--concurrency-range', String(best.operatingConcurrency)]) as PerfOptions;
    const report = await runPerf(options);
    assert.equal(report.failure, undefined);
    assert.ok(report.steps[0]!.requestCount > 0 && report.steps[0]!.throughputInferPerSec > 0);
  });

  test('a model that cannot batch: says so and searches instance counts only (Nereid started by analyze itself)', async () => {
    const { code, stdout, stderr } = await runAnalyze(['-m', 'nobatch_fp32', '--model-repository', repository, '--shape', 'INPUT0:2,3', '-p', '100', '-r', '1', '--run-config-search-max-concurrency', '2', '--run-config-search-max-instance-count', '2', '--run-config-search-mode', 'brute']);
    assert.equal(code, 0, stderr);
    assert.match(stderr, /^starting Nereid on '.*' \(explicit model control mode, model 'nobatch_fp32'\)$/m);
    assert.match(stderr, /model 'nobatch_fp32' cannot batch: its max_batch_size is 0, so its inputs have no batch dimension; only instance counts are searched/);
    // Its own configuration has 2 instances (the onnxruntime default on CPU); brute mode adds 1.
    const rows = stdout.split('\n').filter((line) => /^i\d/.test(line)).map((line) => line.split(/\s+/)[0]);
    assert.deepEqual(rows.sort(), ['i1', 'i2'], stdout);
  });

  test('usage errors name the flag', async () => {
    const apply = await runAnalyze(['-m', 'digits', '-u', server.url, '--apply']);
    assert.equal(apply.code, 1);
    assert.equal(apply.stderr, "nereid analyze: --apply writes into the model's folder: give --model-repository DIR\n");
    const percentile = await runAnalyze(['-m', 'digits', '-u', server.url, '--latency-percentile', '42']);
    assert.equal(percentile.stderr, "nereid analyze: --latency-percentile takes 50, 90, 95, 99, got '42'\n");
    const shape = await runAnalyze(['-m', 'digits', '-u', server.url, '--shape', 'x']);
    assert.equal(shape.stderr, "nereid analyze: --shape takes NAME:D1,D2,... with non-negative integer dimensions, got 'x'\n");
    const help = await runAnalyze(['--help']);
    assert.match(help.stdout, /^Usage: nereid analyze -m MODEL --model-repository DIR \[flags\]/);
  });

  describe('the HTML report in headless Chromium', { skip: skipBrowser }, () => {
    let browser: Browser;
    // NEREID_SCREENSHOT_DIR=docs keeps the screenshot (the README's); otherwise it goes to a folder removed after.
    const keptScreenshotDir = process.env.NEREID_SCREENSHOT_DIR;
    before(async () => {
      browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
    });
    after(async () => {
      await browser?.close();
    });

    test('opens with its two plots, the front and the best config, and no console errors', async () => {
      const page = await browser.newPage({ viewport: { width: 1000, height: 900 } });
      const consoleErrors: string[] = [];
      page.on('console', (message) => {
        if (message.type() === 'error') consoleErrors.push(message.text());
      });
      page.on('pageerror', (error) => consoleErrors.push(error.message));
      await page.goto(pathToFileURL(join(reportDir, 'report.html')).href);
      assert.equal(await page.locator('svg#front-plot g.config').count(), result.configs.filter((config) => config.steps.length > 0).length);
      assert.equal(await page.locator('svg#front-plot g.front circle').count(), result.front.length);
      assert.ok((await page.locator('svg#concurrency-plot g.config').count()) >= 1);
      assert.equal(await page.locator('#summary').textContent(), (result as AnalyzeResult & { summary: string }).summary);
      assert.match((await page.locator('#best-config').textContent()) ?? '', /max_batch_size: \d+/);
      const box = await page.locator('svg#front-plot').boundingBox();
      assert.ok(box !== null && box.width > 800 && box.height > 400);
      await page.screenshot({ path: join(keptScreenshotDir ?? reportDir, 'analyze-report.png'), fullPage: true });
      assert.deepEqual(consoleErrors, []);
    });
  });
});
