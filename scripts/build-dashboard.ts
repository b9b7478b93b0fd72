/**
 * Builds the dashboard's page into dist/dashboard/ (index.html, app.js, app.css): the page's TypeScript
 * and uPlot bundled by esbuild, so that the package serves it offline with no build step for its users.
 * Run by `npm run build` (and `prepare`, so `npm ci` on a clean clone builds it); the dashboard's e2e
 * test runs it too, to test the page as the sources are.
 */
import { copyFile, mkdir } from 'node:fs/promises';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { build } from 'esbuild';

const SOURCE = new URL('../ui/dashboard/', import.meta.url);
const OUTPUT = new URL('../dist/dashboard/', import.meta.url);

export async function buildDashboard(): Promise<void> {
  await mkdir(OUTPUT, { recursive: true });
  await build({
    entryPoints: { app: fileURLToPath(new URL('main.ts', SOURCE)) },
    outdir: fileURLToPath(OUTPUT),
    bundle: true,
    format: 'esm',
    target: ['es2022'],
    minify: true,
    sourcemap: false,
    legalComments: 'eof',
    logLevel: 'warning',
  });
  await copyFile(new URL('index.html', SOURCE), new URL('index.html', OUTPUT));
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) await buildDashboard();
