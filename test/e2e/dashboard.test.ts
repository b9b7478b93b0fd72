import assert from 'node:assert/strict';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { type Browser, type Page, chromium } from 'playwright-core';
import { DEFAULT_METRICS_CONFIG } from '../../src/metrics/server-metrics.js';
import { buildDashboard } from '../../scripts/build-dashboard.js';
import { CHROMIUM, skipBrowser } from '../helpers/chromium.js';
import { EXAMPLES, FIXTURES, type TestServer, startTestServer } from '../helpers/server.js';


type IndexEntry = { name: string; version?: string; state: string; reason?: string };
type StatsJson = {
  model_stats: Array<{
    name: string;
    version: string;
    inference_count: number;
    execution_count: number;
    inference_stats: { success: { count: number }; fail: { count: number } };
    batch_stats: Array<{ batch_size: number; compute_infer: { count: number } }>;
  }>;
};

const simpleRequest = {
  inputs: [
    { name: 'INPUT0', shape: [1, 16], datatype: 'INT32', data: Array(16).fill(2) },
    { name: 'INPUT1', shape: [1, 16], datatype: 'INT32', data: Array(16).fill(1) },
  ],
};
const batchingRequest = (rows: number): object => ({ inputs: [{ name: 'INPUT0', shape: [rows, 4], datatype: 'FP32', data: Array(rows * 4).fill(1.5) }] });

/** Reads `read` again every 100 ms until `isDone` says so; the test's own timeout bounds the wait. */
async function until<T>(read: () => Promise<T>, isDone: (value: T) => boolean): Promise<T> {
  for (;;) {
    const value = await read();
    if (isDone(value)) return value;
    await sleep(100);
  }
}

const numberIn = (text: string | null): number => Number((text ?? '').replace(/,/g, ''));

describe('the dashboard in headless Chromium', { timeout: 300_000, skip: skipBrowser }, () => {
  let server: TestServer;
  let browser: Browser;
  let page: Page;
  let extra: string;
  const consoleErrors: string[] = [];
  // NEREID_SCREENSHOT_DIR=docs keeps the screenshots (the README's); otherwise they go to a folder removed after.
  const keptScreenshotDir = process.env.NEREID_SCREENSHOT_DIR;
  const screenshotDir = keptScreenshotDir ?? mkdtempSync(join(tmpdir(), 'nereid-dashboard-shots-'));

  const index = async (): Promise<IndexEntry[]> => (await (await server.post('/v2/repository/index', '')).json()) as IndexEntry[];
  const statsOf = async (name: string): Promise<StatsJson['model_stats'][number]> =>
    ((await (await server.get(`/v2/models/${name}/stats`)).json()) as StatsJson).model_stats[0]!;
  const fact = async (id: string): Promise<string> => (await page.getByTestId(id).textContent()) ?? '';
  const stateCell = (name: string): ReturnType<Page['locator']> => page.locator(`tr[data-model="${name}"] td[data-field="state"]`);

  before(async () => {
    await buildDashboard();
    extra = mkdtempSync(join(tmpdir(), 'nereid-dashboard-'));
    for (const name of ['batching', 'broken_model']) cpSync(join(FIXTURES, name), join(extra, name), { recursive: true });
    server = await startTestServer({
      modelRepositories: [EXAMPLES, extra],
      modelControlMode: 'explicit',
      startupModels: ['*'],
      metricsConfig: { ...DEFAULT_METRICS_CONFIG, summaryLatencies: true },
    });
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
    page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    page.on('console', (message) => {
      if (message.type() === 'error') consoleErrors.push(message.text());
    });
    page.on('pageerror', (error) => consoleErrors.push(error.message));
    await page.goto(`${server.url}/dashboard`);
  });
  after(async () => {
    await browser?.close();
    await server?.close();
    rmSync(extra, { recursive: true, force: true });
    if (keptScreenshotDir === undefined) rmSync(screenshotDir, { recursive: true, force: true });
  });

  test('lists every model version with its state, and a broken model with its reason', async () => {
    const entries = await index();
    assert.ok(entries.some((entry) => entry.name === 'simple' && entry.state === 'READY'));
    await page.locator('tr[data-model]').nth(entries.length - 1).waitFor();
    assert.equal(await page.locator('tr[data-model]').count(), entries.length);
    for (const entry of entries) {
      const cell = page.locator(`tr[data-model="${entry.name}"][data-version="${entry.version ?? ''}"] td[data-field="state"]`);
      assert.equal(await cell.locator('.state').textContent(), entry.state, entry.name);
      if (entry.reason !== undefined) assert.equal(await cell.locator('.reason').textContent(), entry.reason, entry.name);
    }
    const broken = entries.find((entry) => entry.name === 'broken_model')!;
    assert.equal(broken.state, 'UNAVAILABLE');
    assert.match(broken.reason ?? '', /.+/);
    await page.getByRole('button', { name: 'broken_model', exact: true }).click();
    await page.locator('#detail-reason').filter({ hasText: broken.reason! }).waitFor();
    assert.equal(await page.locator('#detail-reason').textContent(), `Why it is UNAVAILABLE: ${broken.reason}`);
    await page.locator('#detail-logs li').filter({ hasText: "'broken_model'" }).first().waitFor();
    await page.locator('tr[data-model="simple"] td[data-field="backend"]').filter({ hasText: 'onnxruntime' }).waitFor();
    assert.equal(await page.locator('tr[data-model="batching"] td[data-field="batching"]').textContent(), 'max 8; dynamic, preferred 8, delay 20000 µs');
  });

  test('chosen from the keyboard, a model without traffic says how to send it some', async () => {
    await page.getByRole('button', { name: 'simple', exact: true }).focus();
    await page.keyboard.press('Enter');
    await page.locator('#detail-heading').filter({ hasText: 'simple · version 1 · READY' }).waitFor();
    const empty = page.locator('#detail-empty');
    await empty.filter({ hasText: 'No traffic yet' }).waitFor();
    assert.match((await empty.locator('pre').textContent()) ?? '', /^curl -X POST http:\/\/127\.0\.0\.1:\d+\/v2\/models\/simple\/infer /);
  });

  test('under traffic the numbers move, then agree with the statistics API', async () => {
    let isSending = true;
    const senders = Array.from({ length: 4 }, async () => {
      while (isSending) assert.equal((await server.post('/v2/models/simple/infer', simpleRequest)).status, 200);
    });
    try {
      await until(() => fact('requests-per-s'), (text) => numberIn(text) > 0);
      const first = numberIn(await fact('success-count'));
      await until(() => fact('success-count'), (text) => numberIn(text) > first);
      await page.locator('#detail-empty').waitFor({ state: 'hidden' });
    } finally {
      isSending = false;
      await Promise.all(senders);
    }
    const stats = await statsOf('simple');
    await until(() => fact('success-count'), (text) => numberIn(text) === stats.inference_stats.success.count);
    assert.equal(numberIn(await fact('inference-count')), stats.inference_count);
    assert.equal(numberIn(await fact('execution-count')), stats.execution_count);
    assert.equal(numberIn(await fact('fail-count')), stats.inference_stats.fail.count);
    assert.match(await fact('latency-quantiles'), /^[\d.]+ (µs|ms) \/ [\d.]+ (µs|ms) \/ [\d.]+ (µs|ms)$/);
    await page.screenshot({ path: join(screenshotDir, 'dashboard-desktop.png'), fullPage: true });
  });

  test('a batching model shows the histogram of the batch sizes it executed', async () => {
    await page.getByRole('button', { name: 'batching', exact: true }).click();
    await page.locator('#detail-heading').filter({ hasText: 'batching · version 1' }).waitFor();
    assert.equal((await server.post('/v2/models/batching/infer', batchingRequest(4))).status, 200);
    const responses = await Promise.all(Array.from({ length: 12 }, () => server.post('/v2/models/batching/infer', batchingRequest(1))));
    assert.deepEqual(new Set(responses.map((response) => response.status)), new Set([200]));
    const expected = (await statsOf('batching')).batch_stats.map((batch) => [batch.batch_size, batch.compute_infer.count]);
    assert.ok(expected.some(([size]) => size === 4), JSON.stringify(expected));
    const rows = await until(
      () => page.locator('#batch-table tbody tr[data-batch-size]').evaluateAll((trs) => trs.map((tr) => [...tr.querySelectorAll('td')].map((td) => Number(td.textContent)))),
      (shown) => JSON.stringify(shown) === JSON.stringify(expected),
    );
    assert.deepEqual(rows, expected);
    assert.equal(await page.locator('#batch-chart canvas').count(), 1);
  });

  test('unload (after a confirmation) and load from the page', async () => {
    const unload = page.locator('tr[data-model="identity_bytes"] button[data-action="unload"]');
    await unload.click();
    await page.locator('#confirm').waitFor();
    assert.match((await page.locator('#confirm-text').textContent()) ?? '', /^Unload 'identity_bytes'\?/);
    await page.getByRole('button', { name: 'Cancel' }).click();
    assert.equal((await index()).find((entry) => entry.name === 'identity_bytes')?.state, 'READY');

    await unload.click();
    await page.locator('#confirm-ok').click();
    await page.locator('#action-result').filter({ hasText: "unloaded 'identity_bytes'" }).waitFor();
    assert.deepEqual((await index()).find((entry) => entry.name === 'identity_bytes'), { name: 'identity_bytes', state: 'UNAVAILABLE', reason: 'unloaded' });
    await stateCell('identity_bytes').locator('.state').filter({ hasText: 'UNAVAILABLE' }).waitFor();
    assert.equal(await stateCell('identity_bytes').locator('.reason').textContent(), 'unloaded');

    await page.locator('tr[data-model="identity_bytes"] button[data-action="load"]').click();
    await page.locator('#action-result').filter({ hasText: "loaded 'identity_bytes'" }).waitFor();
    assert.deepEqual((await index()).find((entry) => entry.name === 'identity_bytes'), { name: 'identity_bytes', version: '1', state: 'READY' });
    await stateCell('identity_bytes').locator('.state').filter({ hasText: 'READY' }).waitFor();
  });

  test('a phone sees the same page in one column', async () => {
    await page.setViewportSize({ width: 390, height: 844 });
    await page.getByRole('button', { name: 'simple', exact: true }).click();
    await page.evaluate('window.scrollTo(0, 0)');
    const width = await page.evaluate('document.documentElement.scrollWidth');
    assert.equal(width, 390);
    await page.screenshot({ path: join(screenshotDir, 'dashboard-phone.png') });
    for (const name of ['dashboard-desktop.png', 'dashboard-phone.png']) {
      assert.deepEqual([...readFileSync(join(screenshotDir, name)).subarray(0, 4)], [0x89, 0x50, 0x4e, 0x47], name);
    }
  });

  test('behind --auth-token-file the page asks for the token, then goes live; an empty repository says so', async (t) => {
    const dir = mkdtempSync(join(tmpdir(), 'nereid-dashboard-token-'));
    mkdirSync(join(dir, 'repository'));
    writeFileSync(join(dir, 'token'), 's3cret-token\n');
    const guarded = await startTestServer({ modelRepositories: [join(dir, 'repository')], authTokenFile: join(dir, 'token') });
    // Its own tab: the refused stream is a console error there, as it should be.
    const tab = await browser.newPage();
    t.after(async () => {
      await tab.close();
      await guarded.close();
      rmSync(dir, { recursive: true, force: true });
    });
    await tab.goto(`${guarded.url}/dashboard`);
    await tab.locator('#connection[data-state="error"]').filter({ hasText: 'access refused: HTTP 401' }).waitFor();
    assert.equal(await tab.locator('#access').getAttribute('open'), '');
    await tab.getByLabel('Bearer token').fill('s3cret-token');
    await tab.getByRole('button', { name: 'Apply' }).click();
    await tab.locator('#connection[data-state="live"]').waitFor();
    await tab.locator('#models-empty').waitFor();
    assert.match((await tab.locator('#models-empty').textContent()) ?? '', /^No models in the repository yet/);
  });

  test('no console errors', () => {
    assert.deepEqual(consoleErrors, []);
  });
});

describe('the dashboard over HTTP', () => {
  test('--allow-dashboard=false: no page, no stream', async (t) => {
    const server = await startTestServer({ modelRepositories: [EXAMPLES], startupModels: [], modelControlMode: 'explicit', isDashboardAllowed: false });
    t.after(() => server.close());
    const response = await server.get('/dashboard');
    assert.equal(response.status, 404);
    assert.deepEqual(await response.json(), { error: "no endpoint at '/dashboard'; see the KServe v2 paths under /v2" });
    assert.equal((await server.get('/dashboard/events')).status, 404);
  });

  test('with --auth-token-file the page is served, its stream and log lines ask for the token', async (t) => {
    await buildDashboard();
    const dir = mkdtempSync(join(tmpdir(), 'nereid-dashboard-token-'));
    mkdirSync(join(dir, 'repository'));
    writeFileSync(join(dir, 'token'), 's3cret-token\n');
    const server = await startTestServer({ modelRepositories: [join(dir, 'repository')], authTokenFile: join(dir, 'token') });
    t.after(async () => {
      await server.close();
      rmSync(dir, { recursive: true, force: true });
    });
    const page = await server.get('/dashboard');
    assert.equal(page.status, 200);
    assert.equal(page.headers.get('content-type'), 'text/html; charset=utf-8');
    assert.match(page.headers.get('content-security-policy') ?? '', /default-src 'self'/);
    assert.match(await page.text(), /<script type="module" src="\/dashboard\/assets\/app\.js">/);
    assert.equal((await server.get('/dashboard/assets/app.js')).status, 200);
    for (const path of ['/dashboard/events', '/dashboard/logs?model=simple']) assert.equal((await server.get(path)).status, 401, path);
    const controller = new AbortController();
    const stream = await server.get('/dashboard/events', { headers: { authorization: 'Bearer s3cret-token' }, signal: controller.signal });
    assert.equal(stream.status, 200);
    assert.equal(stream.headers.get('content-type'), 'text/event-stream');
    const reader = stream.body!.pipeThrough(new TextDecoderStream()).getReader();
    let text = '';
    while (!text.includes('event: frame\ndata: ')) text += (await reader.read()).value ?? '';
    controller.abort();
    await reader.cancel().catch(() => undefined);
  });
});
