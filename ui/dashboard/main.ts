import 'uplot/dist/uPlot.min.css';
import './style.css';
import type { DashboardFrame, ModelTraffic } from '../../src/frontends/dashboard/dashboard-frame.js';
import type { ServerMetadata } from '../../src/protocol/metadata.js';
import { ApiError, api, loadAccess, saveAccess } from './api.js';
import { PALETTE, TimeChart } from './charts.js';
import { byId, setFacts } from './dom.js';
import { readEvents } from './event-reader.js';
import { formatMiB, formatRate, formatTime, formatUptime } from './format.js';
import type { ModelConfigJson } from './model-config.js';
import { ModelDetail } from './model-detail.js';
import { ModelsTable, rowKey } from './models-table.js';

const RETRY_MS = 2000;

/** The page's state: the latest frame, the configurations read so far and the version chosen. */
const configs = new Map<string, ModelConfigJson>();
const configStates = new Map<string, string>();
let latest: DashboardFrame | undefined;
let metadata: ServerMetadata | undefined;
let selected: { name: string; version: string } | undefined;

const serverChart = new TimeChart(byId('server-chart'), {
  series: [
    { label: 'CPU (cores)', color: PALETTE.blue },
    { label: 'resident memory (MiB)', color: PALETTE.orange, dash: [6, 3], isRightAxis: true },
  ],
  leftUnit: 'cores',
  rightUnit: 'MiB',
});
const detail = new ModelDetail();

function showResult(text: string, isOk: boolean): void {
  const result = byId('action-result');
  result.dataset.ok = String(isOk);
  result.textContent = text;
}

const table = new ModelsTable(byId<HTMLTableElement>('models-table'), byId('models-empty'), {
  onSelect: (name, version) => {
    selected = { name, version };
    history.replaceState(null, '', `#model=${encodeURIComponent(name)}&version=${encodeURIComponent(version)}`);
    render();
    byId('detail-heading').focus();
  },
  onAction: async (action, name) => {
    const path = `/v2/repository/models/${encodeURIComponent(name)}/${action === 'unload' ? 'unload' : 'load'}`;
    showResult(`${action === 'unload' ? 'unloading' : action === 'reload' ? 'reloading' : 'loading'} '${name}'…`, true);
    try {
      await api(path, { method: 'POST', body: {} });
      for (const key of configs.keys()) if (key.startsWith(`${name}/`)) configs.delete(key);
      showResult(`${action === 'unload' ? 'unloaded' : action === 'reload' ? 'reloaded' : 'loaded'} '${name}'`, true);
    } catch (error) {
      showResult(`${action} '${name}' failed: ${(error as Error).message}`, false);
    }
    if (selected?.name === name) await detail.refreshLogs(name);
  },
});

/** Reads the configuration of each READY version once, and again after its state changes. */
function refreshConfigs(frame: DashboardFrame): void {
  for (const entry of frame.models) {
    const key = rowKey(entry.name, entry.version ?? '');
    const state = `${entry.state}:${entry.reason ?? ''}`;
    if (configStates.get(key) === state) continue;
    configStates.set(key, state);
    configs.delete(key);
    if (entry.state !== 'READY' || entry.version === undefined) continue;
    api<ModelConfigJson>(`/v2/models/${encodeURIComponent(entry.name)}/versions/${entry.version}/config`)
      .then((config) => {
        configs.set(key, config);
        render();
      })
      .catch(() => configStates.delete(key));
  }
}

function render(): void {
  const frame = latest;
  if (frame === undefined) return;
  const traffic = new Map<string, ModelTraffic>(frame.traffic.map((entry) => [rowKey(entry.name, entry.version), entry]));
  table.update(frame.models, traffic, configs, frame.controlMode);
  setFacts(byId('server-facts'), [
    ['server-version', 'Version', metadata !== undefined ? `${metadata.name} ${metadata.version}` : '–'],
    ['server-uptime', 'Uptime', formatUptime(frame.server.uptimeS)],
    ['server-cpu', 'CPU (cores busy)', formatRate(frame.server.cpuCores)],
    ['server-memory', 'Resident memory', formatMiB(frame.server.residentBytes)],
    ['server-models', 'Loaded models', String(frame.server.loadedModelCount)],
    ['server-control-mode', 'Model control mode', frame.controlMode],
    ['server-extensions', 'Extensions', metadata !== undefined ? metadata.extensions.join(', ') : '–'],
  ]);
  if (selected === undefined && frame.models.length > 0) {
    const first = frame.models.find((entry) => entry.state === 'READY') ?? frame.models[0]!;
    selected = { name: first.name, version: first.version ?? '' };
  }
  if (selected === undefined) return;
  table.select(selected.name, selected.version);
  const key = rowKey(selected.name, selected.version);
  const entry = frame.models.find((model) => rowKey(model.name, model.version ?? '') === key) ?? frame.models.find((model) => model.name === selected!.name);
  if (entry === undefined) {
    byId('model-detail').hidden = true;
    return;
  }
  selected = { name: entry.name, version: entry.version ?? '' };
  detail.show(entry, traffic.get(rowKey(entry.name, entry.version ?? '')), configs.get(rowKey(entry.name, entry.version ?? '')), frame.timeMs);
}

function onFrame(frame: DashboardFrame): void {
  latest = frame;
  serverChart.push(frame.timeMs, [frame.server.cpuCores, frame.server.residentBytes / 2 ** 20]);
  detail.record(frame.timeMs, frame.traffic);
  refreshConfigs(frame);
  const connection = byId('connection');
  connection.dataset.state = 'live';
  connection.textContent = `live · updated ${formatTime(frame.timeMs)}`;
  render();
}

let stream: AbortController | undefined;

async function connect(): Promise<void> {
  stream?.abort();
  const controller = new AbortController();
  stream = controller;
  const connection = byId('connection');
  api<ServerMetadata>('/v2')
    .then((value) => (metadata = value))
    .catch(() => undefined);
  while (!controller.signal.aborted) {
    try {
      await readEvents('/dashboard/events', (type, data) => type === 'frame' && onFrame(JSON.parse(data) as DashboardFrame), controller.signal);
      connection.dataset.state = 'error';
      connection.textContent = 'the server closed the stream; reconnecting…';
    } catch (error) {
      if (controller.signal.aborted) return;
      connection.dataset.state = 'error';
      const isAccess = error instanceof ApiError && (error.status === 401 || error.status === 403);
      connection.textContent = `${isAccess ? 'access refused' : 'disconnected'}: ${(error as Error).message}${isAccess ? ' (see Access)' : '; retrying…'}`;
      if (isAccess) {
        byId<HTMLDetailsElement>('access').open = true;
        return;
      }
    }
    await new Promise((resolve) => setTimeout(resolve, RETRY_MS));
  }
}

function start(): void {
  const access = loadAccess();
  const form = byId<HTMLFormElement>('access-form');
  byId<HTMLInputElement>('access-token').value = access.token;
  byId<HTMLInputElement>('access-header-name').value = access.headerName;
  byId<HTMLInputElement>('access-header-value').value = access.headerValue;
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    saveAccess({
      token: byId<HTMLInputElement>('access-token').value.trim(),
      headerName: byId<HTMLInputElement>('access-header-name').value.trim(),
      headerValue: byId<HTMLInputElement>('access-header-value').value,
    });
    configStates.clear();
    void connect();
  });
  const hash = new URLSearchParams(location.hash.slice(1));
  const model = hash.get('model');
  if (model !== null) selected = { name: model, version: hash.get('version') ?? '' };
  byId('detail-heading').tabIndex = -1;
  void connect();
}

start();
