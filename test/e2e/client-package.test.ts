import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { after, before, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { build } from 'esbuild';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const SERVER_FOLDERS = ['core', 'kernel', 'frontends', 'repository', 'backends', 'scheduling', 'config', 'metrics', 'cli'];

function sourceFiles(folder: string): string[] {
  return readdirSync(folder, { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith('.ts') && !entry.name.endsWith('.test.ts'))
    .map((entry) => join(entry.parentPath, entry.name));
}

/*
 * `nereid/client` as an application installs it: node_modules/nereid with the package.json and a dist/
 * built from src/ file by file (esbuild, like `tsc -p tsconfig.build.json` but in well under a second;
 * neither keeps imports that only bring types), beside the npm packages the client uses.
 */
let app: string;
before(async () => {
  app = mkdtempSync(join(tmpdir(), 'nereid-client-app-'));
  const installed = join(app, 'node_modules', 'nereid');
  mkdirSync(installed, { recursive: true });
  const packageJson = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { files: string[]; exports: Record<string, string> };
  assert.ok(packageJson.files.includes('dist'), 'package.json "files" ships dist/');
  writeFileSync(join(installed, 'package.json'), JSON.stringify(packageJson));
  await build({ entryPoints: sourceFiles(join(ROOT, 'src')), outdir: join(installed, 'dist'), outbase: join(ROOT, 'src'), format: 'esm', platform: 'node', logLevel: 'silent' });
  for (const dependency of ['@grpc', '@bufbuild', 'lossless-json']) symlinkSync(join(ROOT, 'node_modules', dependency), join(app, 'node_modules', dependency));
  writeFileSync(join(app, 'hooks.mjs'), "import { appendFileSync } from 'node:fs';\nexport async function load(url, context, next) {\n  appendFileSync(process.env.LOADED_LIST, url + '\\n');\n  return next(url, context);\n}\n");
  writeFileSync(join(app, 'register.mjs'), "import { register } from 'node:module';\nregister('./hooks.mjs', import.meta.url);\n");
  writeFileSync(join(app, 'main.mjs'), "const client = await import('nereid/client');\nconsole.log(Object.keys(client).sort().join(','));\n");
});
after(() => rmSync(app, { recursive: true, force: true }));

test('an installed nereid/client loads no server module', async () => {
  const list = join(app, 'loaded.txt');
  writeFileSync(list, '');
  const { stdout } = await promisify(execFile)(process.execPath, ['--import', './register.mjs', 'main.mjs'], { cwd: app, env: { ...process.env, LOADED_LIST: list } });
  assert.equal(stdout.trim(), 'AbortError,ClientError,ConnectionError,GrpcClient,HttpClient,InferResult,InferStream,ServerError,SystemSharedMemoryRegion,TimeoutError');
  const packageFiles = readFileSync(list, 'utf8')
    .split('\n')
    .filter((url) => url.startsWith('file:') && url.includes('/node_modules/nereid/'))
    .map((url) => relative(join(app, 'node_modules', 'nereid'), fileURLToPath(url)));
  assert.ok(packageFiles.includes('dist/client/index.js'), packageFiles.join('\n'));
  assert.ok(packageFiles.includes('dist/protocol/grpc-service.js'), packageFiles.join('\n'));
  assert.deepEqual(
    packageFiles.filter((file) => SERVER_FOLDERS.some((folder) => file.startsWith(`dist/${folder}/`))),
    [],
  );
  assert.deepEqual(
    packageFiles.filter((file) => !file.startsWith('dist/client/') && !file.startsWith('dist/protocol/') && file !== 'package.json'),
    [],
  );
});
