import { readFile } from 'node:fs/promises';
import { NereidError } from '../../core/index.js';
import type { Reply } from '../http/reply.js';

/**
 * Where `npm run build` (scripts/build-dashboard.ts) writes the page: the package's dist/dashboard/,
 * reached from this module both as src/frontends/dashboard/ (under tsx) and dist/frontends/dashboard/.
 */
export const DASHBOARD_ASSETS_URL = new URL('../../../dist/dashboard/', import.meta.url);

const CONTENT_TYPES: Readonly<Record<string, string>> = {
  'index.html': 'text/html; charset=utf-8',
  'app.js': 'text/javascript; charset=utf-8',
  'app.css': 'text/css; charset=utf-8',
};

/**
 * The page is inert without the API behind it; this policy keeps it that way: its own script and
 * styles only (uPlot sets element styles, hence 'unsafe-inline' for styles), no framing.
 */
const PAGE_HEADERS = {
  'content-security-policy': "default-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; frame-ancestors 'none'; base-uri 'none'; form-action 'none'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'cache-control': 'no-cache',
};

/** The built page's files, read once on first use and kept in memory. */
export class StaticAssets {
  readonly #files = new Map<string, Promise<Buffer>>();

  /** The file's reply; NOT_FOUND for a name the page does not have or a page that was not built. */
  async reply(name: string): Promise<Reply> {
    const contentType = CONTENT_TYPES[name];
    if (contentType === undefined) throw new NereidError('NOT_FOUND', `no dashboard file '${name}'`);
    let file = this.#files.get(name);
    if (file === undefined) {
      file = readFile(new URL(name, DASHBOARD_ASSETS_URL));
      this.#files.set(name, file);
      file.catch(() => this.#files.delete(name));
    }
    try {
      return { status: 200, headers: { ...PAGE_HEADERS, 'content-type': contentType }, chunks: [await file] };
    } catch {
      throw new NereidError('NOT_FOUND', `the dashboard's ${name} is not built; run 'npm run build' in the nereid package`);
    }
  }
}
