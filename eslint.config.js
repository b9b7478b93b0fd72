import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/', 'node_modules/', 'src/protocol/gen/', '.scratch/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { process: 'readonly', Buffer: 'readonly', console: 'readonly', URL: 'readonly', performance: 'readonly', setTimeout: 'readonly', clearTimeout: 'readonly', TextDecoder: 'readonly', TextEncoder: 'readonly' } },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', ignoreRestSiblings: true }],
      '@typescript-eslint/no-non-null-assertion': 'off',
    },
  },
  {
    // The dashboard's page runs in the browser (bundled by scripts/build-dashboard.ts).
    files: ['ui/**/*.ts'],
    languageOptions: {
      globals: { document: 'readonly', window: 'readonly', location: 'readonly', history: 'readonly', sessionStorage: 'readonly', fetch: 'readonly', Headers: 'readonly', Response: 'readonly', ResizeObserver: 'readonly', TextDecoderStream: 'readonly', AbortController: 'readonly', Intl: 'readonly' },
    },
  },
  {
    // Front ends see the core only through its public surface (docs/architecture.md).
    files: ['src/frontends/**/*.ts'],
    ignores: ['src/frontends/**/*.test.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            { group: ['**/core/*', '!**/core/index.js'], message: 'Front ends import the core only from core/index.js.' },
            { group: ['**/kernel/*', '**/repository/*', '**/scheduling/*', '**/backends/*', '**/config/*'], message: 'Front ends reach models through core/index.js.' },
          ],
        },
      ],
    },
  },
  {
    // The client library shares only the protocol layer with the server (docs/architecture.md); its tests too.
    files: ['src/client/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['**/core/*', '**/kernel/*', '**/util/*', '**/frontends/*', '**/repository/*', '**/scheduling/*', '**/backends/*', '**/config/*', '**/metrics/*', '**/logging/*', '**/cli/*', '**/perf/*', '**/server.js'],
              message: 'The client imports only src/protocol/ and itself.',
            },
          ],
        },
      ],
    },
  },
  {
    // The protocol layer is shared by the server and the client: it imports nothing of either.
    files: ['src/protocol/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['**/core/*', '**/kernel/*', '**/util/*', '**/frontends/*', '**/repository/*', '**/scheduling/*', '**/backends/*', '**/config/*', '**/metrics/*', '**/logging/*', '**/cli/*', '**/perf/*', '**/client/*', '**/server.js'],
              message: 'src/protocol/ imports only itself (and npm packages).',
            },
          ],
        },
      ],
    },
  },
);
