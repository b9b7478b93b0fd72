import type { IncomingMessage } from 'node:http';
import { NereidError } from '../../core/index.js';
import type { RecentLogLines } from '../../logging/recent-log-lines.js';
import type { AccessPolicy } from '../access-policy.js';
import { checkHttpAccess } from '../http/access-check.js';
import { type Reply, jsonReply } from '../http/reply.js';
import { DashboardSampler, type DashboardSources } from './dashboard-sampler.js';
import { dashboardEvents } from './event-stream.js';
import { StaticAssets } from './static-assets.js';

export interface DashboardOptions extends DashboardSources {
  /** Lines the server logged, for a model's recent log lines; undefined: the page says there are none kept. */
  readonly recentLogLines?: RecentLogLines;
  /** Between two frames of a stream (default 1000). */
  readonly intervalMs?: number;
}

/** Whether a request path is the dashboard's. */
export const isDashboardPath = (path: string): boolean => path === '/dashboard' || path.startsWith('/dashboard/');

const LOG_LINE_LIMIT = 50;

/**
 * The live dashboard under /dashboard on the HTTP port: the page (`/dashboard`, `/dashboard/assets/*`),
 * its event stream (`/dashboard/events`) and a model's recent log lines (`/dashboard/logs?model=NAME`).
 * The page does everything else (configuration, load, unload) through the KServe v2 API.
 *
 * Access: the page itself carries no data and is served to anyone; the stream carries statistics and the
 * repository index, so it asks for what `/v2/models/stats` and `/v2/repository/index` ask for (the
 * bearer token, the headers of the `statistics` and `model-repository` categories), and the log lines
 * what `/v2/logging` asks for. The dashboard is no way around `--http-restricted-api` or `--auth-token-file`.
 */
export class Dashboard {
  readonly #options: DashboardOptions;
  readonly #access: AccessPolicy;
  readonly #assets = new StaticAssets();
  readonly #streams = new Set<AbortController>();

  constructor(options: DashboardOptions, access: AccessPolicy) {
    this.#options = options;
    this.#access = access;
  }

  /** Streams open now. */
  get streamCount(): number {
    return this.#streams.size;
  }

  handle(req: IncomingMessage, path: string): Promise<Reply> | Reply {
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      throw new NereidError('UNSUPPORTED', `'${path}' takes GET, not ${req.method ?? ''}`, { reason: 'METHOD_NOT_ALLOWED', details: { allow: 'GET' } });
    }
    if (path === '/dashboard' || path === '/dashboard/') return this.#assets.reply('index.html');
    if (path.startsWith('/dashboard/assets/')) return this.#assets.reply(path.slice('/dashboard/assets/'.length));
    if (path === '/dashboard/events') return this.#events(req);
    if (path === '/dashboard/logs') return this.#logs(req);
    throw new NereidError('NOT_FOUND', `no endpoint at '${path}'; the dashboard is at /dashboard`);
  }

  /** Ends every open stream (the server is stopping). */
  close(): void {
    for (const stream of this.#streams) stream.abort();
  }

  #events(req: IncomingMessage): Reply {
    if (req.method !== 'GET') throw new NereidError('UNSUPPORTED', `'/dashboard/events' takes GET, not ${req.method ?? ''}`, { reason: 'METHOD_NOT_ALLOWED', details: { allow: 'GET' } });
    checkHttpAccess({ kind: 'statistics', modelName: undefined, modelVersion: undefined }, req.headers, this.#access);
    checkHttpAccess({ kind: 'repository-index' }, req.headers, this.#access);
    const controller = new AbortController();
    this.#streams.add(controller);
    const end = (): void => {
      controller.abort();
      this.#streams.delete(controller);
    };
    req.socket.once('close', end);
    const stream = dashboardEvents(new DashboardSampler(this.#options), this.#options.intervalMs ?? 1000, controller.signal);
    return {
      status: 200,
      headers: { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', 'x-accel-buffering': 'no' },
      chunks: [],
      stream: (async function* () {
        try {
          yield* stream;
        } finally {
          req.socket.off('close', end);
          end();
        }
      })(),
    };
  }

  #logs(req: IncomingMessage): Reply {
    checkHttpAccess({ kind: 'logging' }, req.headers, this.#access);
    const model = new URL(req.url ?? '/', 'http://localhost').searchParams.get('model');
    if (model === null || model === '') throw new NereidError('INVALID_ARG', "name the model: /dashboard/logs?model=NAME");
    const lines = this.#options.recentLogLines?.about(model, LOG_LINE_LIMIT) ?? [];
    return jsonReply({ model, is_kept: this.#options.recentLogLines !== undefined, lines });
  }
}
