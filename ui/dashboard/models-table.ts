import type { ControlMode, ModelTraffic } from '../../src/frontends/dashboard/dashboard-frame.js';
import type { RepositoryIndexEntryJson } from '../../src/protocol/repository-index.js';
import { confirmAction, el } from './dom.js';
import { formatRate } from './format.js';
import { type ModelConfigJson, backendOf, batchingOf, instanceCountOf } from './model-config.js';

export const rowKey = (name: string, version: string): string => `${name}/${version}`;

interface Row {
  readonly tr: HTMLTableRowElement;
  readonly cells: Readonly<Record<'state' | 'backend' | 'instances' | 'batching' | 'requests' | 'inferences' | 'busy' | 'actions', HTMLTableCellElement>>;
  readonly button: HTMLButtonElement;
  actionsFor: string;
}

export interface ModelsTableOptions {
  readonly onSelect: (name: string, version: string) => void;
  /** Runs a repository action and shows its result; resolves when it is done, failed or not. */
  readonly onAction: (action: 'load' | 'unload' | 'reload', name: string) => Promise<void>;
}

const setText = (cell: HTMLElement, text: string): void => {
  if (cell.textContent !== text) cell.textContent = text;
};

/**
 * The models table: one row per model version, kept across frames (so focus and selection stay put
 * while the numbers change), with load, unload and reload in explicit mode.
 */
export class ModelsTable {
  readonly #body: HTMLTableSectionElement;
  readonly #empty: HTMLElement;
  readonly #options: ModelsTableOptions;
  readonly #rows = new Map<string, Row>();
  #selected: string | undefined;

  constructor(table: HTMLTableElement, empty: HTMLElement, options: ModelsTableOptions) {
    this.#body = table.tBodies[0]!;
    this.#empty = empty;
    this.#options = options;
  }

  select(name: string, version: string): void {
    this.#selected = rowKey(name, version);
    for (const [key, row] of this.#rows) {
      row.tr.classList.toggle('selected', key === this.#selected);
      if (key === this.#selected) row.button.setAttribute('aria-current', 'true');
      else row.button.removeAttribute('aria-current');
    }
  }

  update(models: readonly RepositoryIndexEntryJson[], traffic: ReadonlyMap<string, ModelTraffic>, configs: ReadonlyMap<string, ModelConfigJson>, controlMode: ControlMode): void {
    this.#empty.hidden = models.length > 0;
    const seen = new Set<string>();
    const namesWithRow = new Set<string>();
    models.forEach((entry, index) => {
      const version = entry.version ?? '';
      const key = rowKey(entry.name, version);
      seen.add(key);
      const row = this.#rows.get(key) ?? this.#addRow(entry.name, version);
      const next = this.#body.rows[index];
      if (next !== row.tr) this.#body.insertBefore(row.tr, next ?? null);
      const state = row.cells.state;
      const reason = entry.reason ?? '';
      if (state.dataset.state !== entry.state || state.dataset.reason !== reason) {
        state.dataset.state = entry.state;
        state.dataset.reason = reason;
        state.replaceChildren(el('span', { class: `state state-${entry.state}` }, entry.state), ...(reason !== '' ? [el('span', { class: 'reason' }, reason)] : []));
      }
      const config = configs.get(key);
      setText(row.cells.backend, config !== undefined ? backendOf(config) : '–');
      setText(row.cells.instances, config !== undefined ? instanceCountOf(config) : '–');
      setText(row.cells.batching, config !== undefined ? batchingOf(config) : '–');
      const stats = traffic.get(key);
      setText(row.cells.requests, stats !== undefined ? formatRate(stats.requestsPerS) : '–');
      setText(row.cells.inferences, stats !== undefined ? formatRate(stats.inferencesPerS) : '–');
      setText(row.cells.busy, stats !== undefined ? formatRate(stats.busyInstances) : '–');
      // Actions apply to a model (all its versions): shown on its first row only.
      const isFirstRow = !namesWithRow.has(entry.name);
      namesWithRow.add(entry.name);
      const isReady = models.some((other) => other.name === entry.name && other.state === 'READY');
      const actionsFor = controlMode !== 'explicit' || !isFirstRow ? controlMode : isReady ? 'ready' : 'not-ready';
      if (row.actionsFor !== actionsFor) {
        row.actionsFor = actionsFor;
        row.cells.actions.replaceChildren(...this.#actions(entry.name, actionsFor));
      }
    });
    for (const [key, row] of this.#rows) {
      if (seen.has(key)) continue;
      row.tr.remove();
      this.#rows.delete(key);
    }
  }

  #addRow(name: string, version: string): Row {
    const button = el('button', { type: 'button', class: 'model-button' }, name);
    button.addEventListener('click', () => this.#options.onSelect(name, version));
    const cell = (label: string): HTMLTableCellElement => el('td', { 'data-label': label });
    const cells = {
      state: cell('State'),
      backend: cell('Backend'),
      instances: cell('Instances'),
      batching: cell('Batching'),
      requests: cell('Requests/s'),
      inferences: cell('Inferences/s'),
      busy: cell('Busy instances'),
      actions: cell('Actions'),
    };
    const tr = el(
      'tr',
      { 'data-model': name, 'data-version': version },
      el('th', { scope: 'row', 'data-label': 'Model' }, button),
      el('td', { 'data-label': 'Version' }, version || '–'),
      cells.state,
      cells.backend,
      cells.instances,
      cells.batching,
      cells.requests,
      cells.inferences,
      cells.busy,
      cells.actions,
    );
    for (const [field, td] of Object.entries(cells)) td.dataset.field = field;
    const row: Row = { tr, cells, button, actionsFor: '' };
    this.#rows.set(rowKey(name, version), row);
    if (this.#selected === rowKey(name, version)) tr.classList.add('selected');
    return row;
  }

  #actions(name: string, actionsFor: string): Node[] {
    if (actionsFor === 'none' || actionsFor === 'poll') return [el('span', { class: 'muted', title: 'load and unload need --model-control-mode=explicit' }, '–')];
    if (actionsFor === 'explicit') return [];
    const button = (action: 'load' | 'unload' | 'reload', label: string, isDestructive: boolean): HTMLButtonElement => {
      const element = el('button', { type: 'button', 'data-action': action, 'aria-label': `${label} ${name}`, ...(isDestructive ? { class: 'danger' } : {}) }, label);
      element.addEventListener('click', () => {
        void (async () => {
          if (isDestructive) {
            const question =
              action === 'unload'
                ? `Unload '${name}'? It stops taking requests once those it accepted are answered.`
                : `Reload '${name}'? Its versions are loaded again from the repository; requests go to the new ones once they are ready.`;
            if (!(await confirmAction(question))) return;
          }
          element.disabled = true;
          try {
            await this.#options.onAction(action, name);
          } finally {
            element.disabled = false;
          }
        })();
      });
      return element;
    };
    return [el('span', { class: 'actions' }, ...(actionsFor === 'ready' ? [button('reload', 'Reload', true), button('unload', 'Unload', true)] : [button('load', 'Load', false)]))];
  }
}
