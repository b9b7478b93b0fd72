import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, test } from 'node:test';
import { HttpClient } from '../../src/client/index.js';
import type { PerfReport } from '../../src/perf/report.js';
import { EXAMPLES, FIXTURES, type TestServer, startTestServer } from '../helpers/server.js';
import { checkWellFormedXml } from '../helpers/xml.js';

const MAIN = fileURLToPath(new URL('../../src/cli/main.ts', import.meta.url));

/** Runs `nereid perf` as its own process, as a user would; resolves with its exit code and output. */
function runPerf(args: readonly string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', MAIN, 'perf', ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.once('error', reject);
    child.once('exit', (code) => resolve({ code: code ?? -1, stdout, stderr }));
  });
}

/** Successful requests the server has counted for a model, over all its versions. */
async function serverSuccessCount(client: HttpClient, model: string): Promise<number> {
  return (await client.modelStatistics(model)).reduce((total, stats) => total + stats.inferenceStats.success.count, 0);
}

/**
 * The count check: every window's requests equal the server's success count over that window, and
 * the windows together account for every request the server counted during the run.
 */
function assertCountsAgree(report: PerfReport, serverDelta: number): void {
  let total = 0;
  for (const step of report.steps) {
    assert.ok(step.windows.length >= 1 && step.windows.length <= report.settings.maxTrials);
    for (const window of step.windows) {
      assert.ok(window.requestCount > 0, 'every window answers requests');
      assert.equal(window.failedCount, 0);
      assert.equal(window.sentCount, window.requestCount);
      assert.equal(window.server.successCount, window.requestCount, 'requests sent = requests the server counted');
      assert.equal(window.server.failCount, 0);
      assert.equal(window.server.inferenceCount, window.requestCount * report.settings.batchSize);
      total += window.requestCount;
    }
    const lastThree = step.windows.slice(-3);
    assert.equal(step.requestCount, lastThree.reduce((sum, window) => sum + window.requestCount, 0));
    assert.equal(step.server.successCount, step.requestCount);
  }
  assert.equal(total, serverDelta);
}

const CSV_HEADER =
  'Inferences/Second,Client+Network+Server Send/Recv,Server Queue,Server Compute Input,Server Compute Infer,Server Compute Output,' +
  'p50 latency,p90 latency,p95 latency,p99 latency,Avg latency,Requests,Failed Requests,Server Success Count,Send Rate,Stable';

function assertCsv(text: string, firstColumn: string, report: PerfReport): void {
  const lines = text.trimEnd().split('\n');
  assert.equal(lines[0], `${firstColumn},${CSV_HEADER}`);
  assert.equal(lines.length, report.steps.length + 1);
  for (const [index, line] of lines.slice(1).entries()) {
    const cells = line.split(',');
    assert.equal(cells.length, 17);
    for (const cell of cells.slice(0, 16)) assert.ok(Number.isFinite(Number(cell)), `'${cell}' is a number`);
    assert.ok(['yes', 'no'].includes(cells[16]!));
    const step = report.steps[index]!;
    assert.equal(Number(cells[12]), step.requestCount);
    assert.equal(Number(cells[14]), step.server.successCount);
  }
}

describe('nereid perf against the real server', () => {
  let server: TestServer;
  let client: HttpClient;
  let dir: string;
  before(async () => {
    server = await startTestServer({ modelRepositories: [EXAMPLES, FIXTURES], isStrictReadiness: false, isClientShmAllowed: true });
    client = new HttpClient(server.url);
    dir = mkdtempSync(join(tmpdir(), 'nereid-perf-'));
  });
  after(async () => {
    await client.close();
    await server.close();
    rmSync(dir, { recursive: true, force: true });
  });

  test('a sequence model: every request in a sequence (none refused), over HTTP and a gRPC stream, in both load modes', async () => {
    for (const extra of [['--concurrency-range', '4'], ['-i', 'grpc', '--streaming', '--request-rate-range', '200', '--num-of-sequences', '3']]) {
      const before = await serverSuccessCount(client, 'accumulator');
      const json = join(dir, `sequence-${extra[0]}.json`);
      const url = extra[0] === '-i' ? server.grpcUrl! : server.url;
      const run = await runPerf(['-m', 'accumulator', '-u', url, ...extra, '-p', '200', '-r', '3', '--sequence-length', '5', '--sequence-id-range', '1000', '--json', json]);
      assert.equal(run.code, 0, run.stderr);
      assertCountsAgree(JSON.parse(readFileSync(json, 'utf8')) as PerfReport, (await serverSuccessCount(client, 'accumulator')) - before);
    }
  });

  test('a concurrency range over HTTP: counts agree with the server; CSV, JSON and SVG are written', async () => {
    const before = await serverSuccessCount(client, 'simple');
    const files = { csv: join(dir, 'c.csv'), json: join(dir, 'c.json'), svg: join(dir, 'c.svg') };
    const run = await runPerf(['-m', 'simple', '-u', server.url, '--concurrency-range', '1:3:2', '-p', '200', '-r', '3', '-f', files.csv, '--json', files.json, '--plot', files.svg]);
    assert.equal(run.code, 0, run.stderr);
    const report = JSON.parse(readFileSync(files.json, 'utf8')) as PerfReport;
    assert.equal(report.tool, 'nereid perf');
    assert.equal(report.settings.mode, 'concurrency');
    assert.deepEqual(
      report.steps.map((step) => step.load),
      [
        { mode: 'concurrency', concurrency: 1 },
        { mode: 'concurrency', concurrency: 3 },
      ],
    );
    assertCountsAgree(report, (await serverSuccessCount(client, 'simple')) - before);
    for (const step of report.steps) {
      const { averageUs, minUs, p50Us, p90Us, p95Us, p99Us, maxUs } = step.latencyUs;
      assert.ok(minUs <= p50Us && p50Us <= p90Us && p90Us <= p95Us && p95Us <= p99Us && p99Us <= maxUs && averageUs >= minUs && averageUs <= maxUs);
      assert.ok(step.serverTimesUs.computeInferUs > 0);
    }
    assertCsv(readFileSync(files.csv, 'utf8'), 'Concurrency', report);
    const svg = readFileSync(files.svg, 'utf8');
    const elements = checkWellFormedXml(svg);
    assert.equal(elements[0], 'svg');
    assert.equal(elements.filter((name) => name === 'polyline').length, 5, 'one line per latency statistic');
    assert.equal(elements.filter((name) => name === 'circle').length, 5 * report.steps.length);
    // The table on stdout, progress on stderr.
    assert.match(run.stdout, /^\nnereid perf: model 'simple' over http at http:\/\/127\.0\.0\.1:\d+, batch size 1, random data\n/);
    assert.match(run.stdout, /\n\s*Concurrency\s+Infer\/s\s+Avg ms\s+p50 ms\s+p90 ms\s+p95 ms\s+p99 ms\s+Queue µs\s+Input µs\s+Infer µs\s+Output µs\s+Other µs\s+Requests\s+Stable\n\s+1\s/);
    assert.match(run.stderr, /^concurrency 1, window 1: [\d.]+ infer\/s, avg [\d.]+ ms, p99 [\d.]+ ms, (\d+) requests \(server counted \1\)/m);
    assert.match(run.stderr, /^concurrency 3: [\d.]+ infer\/s, avg [\d.]+ ms, p99 [\d.]+ ms \((not )?stable after \d+ windows\)$/m);
  });

  test('a request-rate range over gRPC with Poisson arrivals: JSON on stdout, counts agree; the HTML plot is written', async () => {
    const before = await serverSuccessCount(client, 'digits');
    const html = join(dir, 'r.html');
    const run = await runPerf([
      '-m', 'digits', '-i', 'grpc', '-u', server.grpcUrl!, '--request-rate-range', '40:80:40', '--request-distribution', 'poisson',
      '-p', '300', '-r', '3', '--seed', '7', '--json', '--plot', html,
    ]);
    assert.equal(run.code, 0, run.stderr);
    const report = JSON.parse(run.stdout) as PerfReport;
    assert.equal(report.settings.protocol, 'grpc');
    assert.equal(report.settings.requestDistribution, 'poisson');
    assert.deepEqual(
      report.steps.map((step) => step.load),
      [
        { mode: 'request-rate', requestRate: 40 },
        { mode: 'request-rate', requestRate: 80 },
      ],
    );
    assertCountsAgree(report, (await serverSuccessCount(client, 'digits')) - before);
    for (const step of report.steps) assert.ok(step.averageSendLagUs !== undefined && step.averageSendLagUs >= 0);
    assert.match(run.stderr, /Request Rate\s+Sent\/s\s+Infer\/s/);
    const page = readFileSync(html, 'utf8');
    assert.match(page, /^<!DOCTYPE html>\n<html lang="en">/);
    const svg = /<svg[\s\S]*<\/svg>/.exec(page)![0];
    assert.equal(checkWellFormedXml(svg)[0], 'svg');
    assert.equal((page.match(/<tr><td>/g) ?? []).length, 2);
    assert.match(page, /<tr><td>40<\/td>/);
  });

  test('gRPC streaming, a constant rate, batches of 4 and a data file: counts agree, inferences count the batch', async () => {
    const data = join(dir, 'digits.json');
    const samples = JSON.parse(readFileSync(new URL('../fixtures/digits_samples.json', import.meta.url), 'utf8')) as { images: number[][] };
    writeFileSync(data, JSON.stringify({ data: samples.images.slice(0, 6).map((image) => ({ INPUT: image })) }));
    const before = await serverSuccessCount(client, 'digits');
    const json = join(dir, 's.json');
    const run = await runPerf(['-m', 'digits', '-i', 'grpc', '-u', server.grpcUrl!, '--streaming', '-b', '4', '--input-data', data, '--concurrency-range', '2', '-p', '200', '-r', '3', '--json', json]);
    assert.equal(run.code, 0, run.stderr);
    const report = JSON.parse(readFileSync(json, 'utf8')) as PerfReport;
    assert.equal(report.settings.isStreaming, true);
    assert.equal(report.settings.batchSize, 4);
    assertCountsAgree(report, (await serverSuccessCount(client, 'digits')) - before);
    const step = report.steps[0]!;
    assert.equal(step.server.inferenceCount, step.requestCount * 4);
  });

  test('JSON tensors over HTTP, a variable shape, zero data', async () => {
    const json = join(dir, 'n.json');
    const before = await serverSuccessCount(client, 'nobatch_fp32');
    const run = await runPerf([
      '-m', 'nobatch_fp32', '-u', server.url, '--shape', 'INPUT0:2,3', '--input-data', 'zero', '--input-tensor-format', 'json', '--output-tensor-format', 'json',
      '-p', '200', '-r', '3', '--json', json,
    ]);
    assert.equal(run.code, 0, run.stderr);
    assertCountsAgree(JSON.parse(readFileSync(json, 'utf8')) as PerfReport, (await serverSuccessCount(client, 'nobatch_fp32')) - before);
  });

  test('--shared-memory system over HTTP and gRPC streaming: counts agree; the regions are unregistered and removed at the end', async () => {
    // Regions that other processes left (a perf run killed on this machine) are not this run's to judge.
    const perfRegions = (): string[] => readdirSync('/dev/shm').filter((name) => name.startsWith('nereid_perf_'));
    const earlier = new Set(perfRegions());
    for (const protocolArgs of [['-u', server.url], ['-i', 'grpc', '-u', server.grpcUrl!, '--streaming']]) {
      const json = join(dir, 'shm.json');
      const before = await serverSuccessCount(client, 'simple');
      const run = await runPerf(['-m', 'simple', ...protocolArgs, '--shared-memory', 'system', '--output-shared-memory-size', '64', '--concurrency-range', '2', '-p', '200', '-r', '3', '--json', json]);
      assert.equal(run.code, 0, run.stderr);
      assertCountsAgree(JSON.parse(readFileSync(json, 'utf8')) as PerfReport, (await serverSuccessCount(client, 'simple')) - before);
      assert.deepEqual(await (await fetch(`${server.url}/v2/systemsharedmemory/status`)).json(), []);
      assert.deepEqual(perfRegions().filter((name) => !earlier.has(name)), []);
    }
  });

  // More flag and input-data errors: src/perf/perf-options.test.ts, src/perf/input-data.test.ts.
  test('what cannot run is said plainly, with exit code 1', async () => {
    const cases: Array<[string[], RegExp]> = [
      [['-m', 'nope', '-u', server.url], /^nereid perf: cannot read model 'nope' from http:\/\/127\.0\.0\.1:\d+ \(http\): Request for unknown model: 'nope' is not found\n$/],
      [['-m', 'simple', '--concurency-range', '1'], /^nereid perf: unknown flag '--concurency-range'\. Did you mean '--concurrency-range'\? Run 'nereid perf --help' for the flags\.\n$/],
      [['-m', 'nobatch_fp32', '-u', server.url], /^nereid perf: input 'INPUT0' has a variable shape \[-1,-1\]; give its size with --shape INPUT0:N,N\n$/],
    ];
    for (const [args, message] of cases) {
      const run = await runPerf(args);
      assert.equal(run.code, 1, args.join(' '));
      assert.match(run.stderr, message);
    }
  });

  test('failed requests stop the sweep: exit code 1, the failure in the report, counts still agree', async () => {
    const json = join(dir, 'f.json');
    const before = await serverSuccessCount(client, 'simple');
    // A wrong --shape: the server refuses every request.
    const run = await runPerf(['-m', 'simple', '-u', server.url, '--shape', 'INPUT0:15', '-p', '100', '-r', '3', '--json', json]);
    assert.equal(run.code, 1);
    const report = JSON.parse(readFileSync(json, 'utf8')) as PerfReport;
    assert.match(
      report.failure!,
      /^\d+ of \d+ requests failed at concurrency 1; the first: unexpected shape for input 'INPUT0' for model 'simple'\. Expected \[-1,16\], got \[1,15\]\. NOTE: Setting a non-zero max_batch_size in the model config requires a batch dimension/,
    );
    assert.equal(report.steps.length, 1);
    assert.equal(report.steps[0]!.windows.length, 1);
    assert.equal(report.steps[0]!.windows[0]!.server.failCount, 0, 'refused before the queue: not counted by the server');
    assert.match(run.stdout, /\nFailed: \d+ of \d+ requests failed at concurrency 1/);
    assert.equal(await serverSuccessCount(client, 'simple'), before);
  });
});
